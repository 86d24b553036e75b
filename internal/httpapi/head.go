package httpapi

import "net/http"

// net/http serves HEAD through GET patterns. A pop is a GET that changes state (it takes a lease and,
// with autoAck, consumes), so HEAD on it must not run it: it is answered like any other method the
// route does not have, 404 no_such_route (docs/decisions.md, "HEAD").
var stateChangingGETs = map[string]bool{
	"/api/v1/pop":               true,
	"/api/v1/pop/queue/{queue}": true,
	"/api/v1/pop/queue/{queue}/partition/{partition}": true,
}

// headRefused reports whether a request is a HEAD on a GET route with side effects.
func headRefused(r *http.Request, rt Route) bool {
	return r.Method == http.MethodHead && rt.Method == http.MethodGet && stateChangingGETs[rt.Pattern]
}
