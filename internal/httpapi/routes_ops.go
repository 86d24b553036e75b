package httpapi

var opsRoutes = []Route{}
