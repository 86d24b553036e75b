// Package httpx holds the net/http pieces that the broker's transport (internal/httpapi) and the
// proxy (internal/proxy) both need, so that each is written once.
package httpx

import "net/http"

// StatusWriter is a ResponseWriter that remembers the status of its response: the first
// WriteHeader's code, or 200 once a body is written without one; 0 while nothing is written.
// Access logs, request metrics and "was anything sent yet" checks read it after the handler.
type StatusWriter struct {
	http.ResponseWriter
	Status int
}

// WriteHeader records the first status and passes every call on.
func (w *StatusWriter) WriteHeader(code int) {
	if w.Status == 0 {
		w.Status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records the implicit 200 of a body written without a header.
func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController (Flush of a long-poll) and http.MaxBytesReader (closing the
// connection after an oversized body) reach the server's own writer.
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
