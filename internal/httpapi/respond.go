package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/queen-go/queen/internal/engine"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	// The answers of push, pop and ack are written without reflection: they are the ones written once
	// per message (pushwire.go, popwire.go, ackwire.go).
	switch res := v.(type) {
	case []engine.PushResult:
		if writePushResults(w, status, res) {
			return
		}
	case *engine.PopResult:
		if res != nil && writeAnswer(w, status, func(dst []byte) ([]byte, bool) { return appendPopResult(dst, res) }) {
			return
		}
	case []engine.AckResult:
		if res != nil && writeAnswer(w, status, func(dst []byte) ([]byte, bool) { return appendAckResults(dst, res), true }) {
			return
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"encode response failed"}`)
	}
	writeBody(w, status, b)
}

// jsonType is the Content-Type of every JSON answer, shared as the CORS headers are (server.go).
var jsonType = []string{"application/json"}

// writeBody answers status with the JSON text b.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonType
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeNoContent answers 204 with nothing at all: no body, no Content-Length, no Transfer-Encoding.
// Strict HTTP/1.1 clients treat a declared length on a 204 as a corrupt connection.
func writeNoContent(w http.ResponseWriter) {
	h := w.Header()
	h.Del("Content-Type")
	h.Del("Content-Length")
	w.WriteHeader(http.StatusNoContent)
}

func tooLargeText(limit int64) string {
	return fmt.Sprintf("request body exceeds QUEEN_MAX_BODY_BYTES (%d)", limit)
}
