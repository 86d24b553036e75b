package httpapi

import (
	"net/http"
	"slices"

	"github.com/queen-go/queen/internal/auth"
)

// Access levels of the route table (auth.Access).
const (
	Public  = auth.Public
	Produce = auth.Produce
	Consume = auth.Consume
	Read    = auth.Read
	Admin   = auth.Admin
)

// Route is one entry of the route table: the mux, the access check and the generated reference all
// derive from this one list.
type Route struct {
	Method  string
	Pattern string
	Access  auth.Access
	Doc     string
	handle  func(s *Server, w http.ResponseWriter, r *http.Request) error
}

// Routes is the broker's route table. Each part of the API keeps its rows in its own file.
var Routes = slices.Concat(coreRoutes, semanticsRoutes, opsRoutes, systemRoutes, dashboardRoutes)

var coreRoutes = []Route{
	{"GET", "/health", Public, "readiness: database round-trip, 503 when it fails", (*Server).handleHealth},
	{"GET", "/livez", Public, "liveness: 200 whenever the process serves HTTP", (*Server).handleLivez},
	{"POST", "/api/v1/configure", Consume, "create or fully reconfigure a queue", (*Server).handleConfigure},
	{"POST", "/api/v1/push", Produce, "push messages; per-item results, 201", (*Server).handlePush},
	{"GET", "/api/v1/pop/queue/{queue}", Consume, "pop from any partition of a queue (lease, long-poll)", (*Server).handlePop},
	{"GET", "/api/v1/pop/queue/{queue}/partition/{partition}", Consume, "pop from one partition", (*Server).handlePop},
	{"POST", "/api/v1/ack", Consume, "acknowledge one message; 200 with a one-item result array", (*Server).handleAck},
	{"POST", "/api/v1/ack/batch", Consume, "acknowledge many messages; 200 with per-item results", (*Server).handleAckBatch},
}
