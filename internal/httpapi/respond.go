package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// jsonAppender is an answer that writes its own JSON text, byte for byte what json.Marshal writes of
// it, without reflection: the answers written once per message (push, pop, ack) are, each beside its
// type in the engine. ok=false: it holds a value it does not write itself, and json.Marshal must.
type jsonAppender interface {
	AppendJSON(dst []byte) (_ []byte, ok bool)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	if a, ok := v.(jsonAppender); ok && writeAnswer(w, status, a) {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"encode response failed"}`)
	}
	writeBody(w, status, b)
}

// answers recycles the buffers the answers that write themselves are written into (net/http copies
// what it is given).
var answers = sync.Pool{New: func() any { return new([]byte) }}

// writeAnswer answers status with what a writes into a recycled buffer; false: a gave up and nothing
// was written.
func writeAnswer(w http.ResponseWriter, status int, a jsonAppender) bool {
	buf := answers.Get().(*[]byte)
	b, ok := a.AppendJSON((*buf)[:0])
	if !ok {
		answers.Put(buf)
		return false
	}
	writeBody(w, status, b)
	if cap(b) <= 1<<20 {
		*buf = b[:0]
		answers.Put(buf)
	}
	return true
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
