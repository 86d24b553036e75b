package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/google/uuid"
)

// readBody reads a JSON request body of at most max bytes. A declared length over the cap is refused
// before anything is read; an undeclared one is cut off at the cap.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, &http.MaxBytesError{Limit: max}
	}
	// MaxBytesReader tells the server to close the connection (instead of draining the rest of an
	// oversized body before answering) only through the server's own ResponseWriter.
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, badRequest("bad body: " + err.Error())
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, badRequest("bad body: empty request body")
	}
	return b, nil
}

// decodeBody parses the body into v; any syntax or type error is a `bad body:` 400.
func decodeBody(w http.ResponseWriter, r *http.Request, max int64, v any) error {
	b, err := readBody(w, r, max)
	if err != nil {
		return err
	}
	if err := guardBody(b); err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return badRequest("bad body: " + err.Error())
	}
	return nil
}

// present reports whether a raw field was given with a non-null value.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// optString reads an optional string field: absent or null gives "", ok; any other non-string is !ok.
func optString(raw json.RawMessage) (string, bool) {
	if !present(raw) {
		return "", true
	}
	if raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func parseUUID(s string) (uuid.UUID, bool) {
	if len(s) != 36 {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

// queryInt reads an optional integer query parameter with a lower bound.
func queryInt(r *http.Request, name string, def, lowest int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lowest {
		return 0, badRequest(fmt.Sprintf("%s must be an integer of at least %d", name, lowest))
	}
	return n, nil
}

// queryPage reads the limit (at least 1, defLimit when absent) and offset (at least 0) of a listing.
func queryPage(r *http.Request, defLimit int) (limit, offset int, err error) {
	if limit, err = queryInt(r, "limit", defLimit, 1); err != nil {
		return 0, 0, err
	}
	if offset, err = queryInt(r, "offset", 0, 0); err != nil {
		return 0, 0, err
	}
	return limit, offset, nil
}

// queryBool reads an optional boolean query parameter: true/1 and false/0.
func queryBool(r *http.Request, name string) (bool, error) {
	switch r.URL.Query().Get(name) {
	case "":
		return false, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, badRequest(name + " must be true or false")
}
