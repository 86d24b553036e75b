package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestStatusWriter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(w http.ResponseWriter)
		want  int
	}{
		{"nothing written", func(http.ResponseWriter) {}, 0},
		{"header", func(w http.ResponseWriter) { w.WriteHeader(http.StatusCreated) }, http.StatusCreated},
		{"body without header", func(w http.ResponseWriter) { _, _ = w.Write([]byte("x")) }, http.StatusOK},
		{"first header wins", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNoContent)
			w.WriteHeader(http.StatusInternalServerError)
		}, http.StatusNoContent},
		{"header then body", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte("x"))
		}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			sw := &StatusWriter{ResponseWriter: rec}
			tc.write(sw)
			if sw.Status != tc.want {
				t.Fatalf("Status = %d, want %d", sw.Status, tc.want)
			}
		})
	}
}

// Flush must reach the server's writer through Unwrap: long-poll answers depend on it.
func TestStatusWriterUnwrapReachesFlush(t *testing.T) {
	rec := httptest.NewRecorder()
	sw := &StatusWriter{ResponseWriter: rec}
	if err := http.NewResponseController(sw).Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if !rec.Flushed {
		t.Fatal("the recorder was not flushed")
	}
}
