package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	// A declared length is read into a buffer of that size: io.ReadAll's doubling would leave up to
	// twice the body as garbage, which counts against the memory bound.
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, max))
	b := buf.Bytes()
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
	return parseBody(b, v)
}

// parseBody is decodeBody for a body already read.
func parseBody(b []byte, v any) error {
	if err := guardBody(b); err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return badBody(err)
	}
	return nil
}

// badBody is the 400 of a body encoding/json refused, in the API's terms: a value of the wrong type
// names its field and the rule ("bad body: options.leaseTime must be an integer from 0 to
// 2147483647, got a string"), never the Go type it was decoded into.
func badBody(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return badRequest("bad body: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	field := te.Field
	if field == "" {
		field = "the body"
	}
	got := te.Value
	switch {
	case strings.HasPrefix(got, "number "):
		got = strings.TrimPrefix(got, "number ")
	case got == "array" || got == "object":
		got = "an " + got
	default:
		got = "a " + got
	}
	return badRequest(fmt.Sprintf("bad body: %s must be %s, got %s", field, typeRule(te.Type), got))
}

// typeRule says in the API's terms which JSON values a Go type takes.
func typeRule(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		bits := t.Bits()
		return fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		if t.Bits() == 64 {
			return "a non-negative integer"
		}
		return fmt.Sprintf("an integer from 0 to %d", uint64(1)<<t.Bits()-1)
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
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
	if s, ok := plainString(raw); ok {
		return s, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// plainString decodes a JSON string literal that needs no unescaping (no backslash, no control
// character, valid UTF-8: what json.Unmarshal would copy byte for byte) without running the decoder;
// it is called for the three or four strings of every pushed item. !ok: let json.Unmarshal decide.
func plainString(raw json.RawMessage) (string, bool) {
	if !isPlainString(raw) {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}

// isPlainString reports whether raw is a string literal plainString reads.
func isPlainString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c == '\\' || c == '"' {
			return false
		}
	}
	return utf8.Valid(body)
}

// rawArray splits a body field that must be a JSON array into its elements; anything else (absent,
// null, not an array) is a 400 with the text missing.
func rawArray(raw json.RawMessage, missing string) ([]json.RawMessage, error) {
	var elems []json.RawMessage
	if !present(raw) || raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return nil, badRequest(missing)
	}
	return elems, nil
}

// decodeElement decodes element i of the body's array named array into v; it must be an object.
func decodeElement(raw json.RawMessage, v any, array string, i int) error {
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, v) != nil {
		return badRequest(fmt.Sprintf("bad body: %s[%d] must be an object", array, i))
	}
	return nil
}

// strField is a string field of a request body: its raw value, where the string goes, and the 400
// text when it is not a string (or, for a required field, when it is absent or empty).
type strField struct {
	raw      json.RawMessage
	dst      *string
	bad      string
	required bool
}

func optional(raw json.RawMessage, dst *string, bad string) strField {
	return strField{raw, dst, bad, false}
}

func required(raw json.RawMessage, dst *string, bad string) strField {
	return strField{raw, dst, bad, true}
}

// readStrings reads string fields in order (absent or null: ""); the first bad one is the error.
func readStrings(fields ...strField) error {
	for _, f := range fields {
		v, ok := optString(f.raw)
		if !ok || (f.required && v == "") {
			return badRequest(f.bad)
		}
		*f.dst = v
	}
	return nil
}

// pathUUID reads a UUID path parameter. A value that is not a UUID cannot name anything, so it is
// answered like an unknown one: a not-found error with the text missing.
func pathUUID(r *http.Request, name, missing string) (uuid.UUID, error) {
	id, ok := parseUUID(r.PathValue(name))
	if !ok {
		return uuid.Nil, notFound(missing)
	}
	return id, nil
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
	return intParam(r.URL.Query(), name, def, lowest)
}

// intParam is queryInt for a query string already parsed (each r.URL.Query() parses it anew).
func intParam(q url.Values, name string, def, lowest int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lowest {
		return 0, badRequest(fmt.Sprintf("%s must be an integer of at least %d", name, lowest))
	}
	return n, nil
}

// pageOf reads the limit (at least 1, defLimit when absent) and offset (at least 0) of a listing.
func pageOf(r *http.Request, defLimit int) (page, error) {
	limit, err := queryInt(r, "limit", defLimit, 1)
	if err != nil {
		return page{}, err
	}
	offset, err := queryInt(r, "offset", 0, 0)
	if err != nil {
		return page{}, err
	}
	return page{limit, offset}, nil
}

// capped is the limit a listing queries with: at most 10 000 rows, whatever was asked.
func (p page) capped() int { return min(p.Limit, 10_000) }

// queryBool reads an optional boolean query parameter: true/1 and false/0.
func queryBool(r *http.Request, name string) (bool, error) {
	return boolParam(r.URL.Query(), name)
}

// boolParam is queryBool for a query string already parsed.
func boolParam(q url.Values, name string) (bool, error) {
	switch q.Get(name) {
	case "":
		return false, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, badRequest(name + " must be true or false")
}

// queryTime reads an optional ISO-8601 timestamp query parameter.
func queryTime(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, badRequest(fmt.Sprintf("%s must be an ISO-8601 timestamp", name))
	}
	return t, nil
}

// timeRange reads from/to (RFC 3339) with defaults now-def .. now.
func timeRange(r *http.Request, def time.Duration) (time.Time, time.Time, error) {
	now := time.Now().UTC()
	from, to := now.Add(-def), now
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"from", &from}, {"to", &to}} {
		if v := r.URL.Query().Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return from, to, badRequest(p.name + " must be an RFC 3339 timestamp")
			}
			*p.dst = t.UTC()
		}
	}
	if to.Before(from) {
		return from, to, badRequest("from must not be after to")
	}
	return from, to, nil
}
