package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) fallback(w http.ResponseWriter, r *http.Request) {
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/api" {
		s.writeError(w, r, errNoSuchRoute)
		return
	}
	if s.opt.Dashboard != nil {
		s.opt.Dashboard.ServeHTTP(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache, no-store, must-revalidate")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(dashboardPlaceholder)
}

var dashboardPlaceholder = []byte(`<!doctype html>
<html><head><meta charset="utf-8"><title>Queen</title></head>
<body><h1>Queen</h1><p>The broker is running. The dashboard is not built into this version yet;
the HTTP API lives under <code>/api/v1/</code>.</p></body></html>
`)

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	body := map[string]any{"status": "healthy", "database": "connected", "server": "queen-go", "version": s.opt.Version,
		"spool": s.eng.SpoolHealth()}
	if rs := s.views.ReadReplica(); rs != nil {
		// Not part of the status: the reads fall back to the primary, so a bad replica fails no request.
		body["readReplica"] = rs
	}
	if err := s.eng.Ping(r.Context()); err != nil {
		// The cause (host, port, user) goes to the log only: /health is public.
		s.log.WarnContext(r.Context(), "health check: database unreachable", slog.Any("error", err))
		body["status"], body["database"] = "unhealthy", "disconnected"
		body["error"] = "database unreachable"
		if errors.Is(err, engine.ErrReadOnly) {
			// Reachable, but a standby: a failover is under way (or the URL names no primary).
			body["database"], body["error"] = "read-only", "database read-only: only a standby is reachable (failover in progress?)"
		}
		writeJSON(w, http.StatusServiceUnavailable, body)
		return nil
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// handleReady answers whether a push sent to this broker now would be answered 201: when the
// database answers, or when it does not but the spool takes pushes (docs/decisions.md "Durability",
// readiness). /health stays the database's own signal, as the original documents it.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) error {
	if err := s.eng.Ping(r.Context()); err == nil {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "database": "connected"})
		return nil
	}
	if s.eng.SpoolAccepts() {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "database": "disconnected", "spooling": true})
		return nil
	}
	writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "database": "disconnected",
		"error": "database unreachable and no spool takes pushes"})
	return nil
}

func (s *Server) handleLivez(request) (map[string]any, error) {
	return map[string]any{"status": "alive", "version": s.opt.Version}, nil
}
