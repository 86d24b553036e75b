package httpapi

var systemRoutes = []Route{
	{"GET", "/api/v1/system/maintenance", Admin, "push maintenance flag (pushes diverted to the disk spool)", (*Server).handleMaintenance},
	{"POST", "/api/v1/system/maintenance", Admin, "switch push maintenance for every broker: {\"enabled\":bool}", (*Server).handleMaintenance},
	{"GET", "/api/v1/system/maintenance/pop", Admin, "pop maintenance flag (pops answer 204)", (*Server).handleMaintenance},
	{"POST", "/api/v1/system/maintenance/pop", Admin, "switch pop maintenance for every broker: {\"enabled\":bool}", (*Server).handleMaintenance},
}
