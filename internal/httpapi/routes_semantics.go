package httpapi

var semanticsRoutes = []Route{}
