package httpapi

var systemRoutes = []Route{}
