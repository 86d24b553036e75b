package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/queen-go/queen/internal/jsonguard"
)

// Edge validation: every body, path parameter and query value meets the input limits of
// docs/decisions.md ("Input limits") before any of it reaches the engine, so input PostgreSQL would
// refuse is a 400 naming the field, never a 500 carrying the database's words.

// guardBody applies jsonguard's rules to a request body. Syntax errors are left to the decoder, which
// words them the way the contract's `bad body: <parser detail>` expects.
func guardBody(b []byte) error {
	var ge *jsonguard.Error
	if err := jsonguard.Check(b, jsonguard.API); errors.As(err, &ge) {
		return badRequest("bad body: " + ge.Error())
	}
	return nil
}

var pathParam = regexp.MustCompile(`\{(\w+)\}`)

// pathParams lists the wildcard names of a route pattern.
func pathParams(pattern string) []string {
	var names []string
	for _, m := range pathParam.FindAllStringSubmatch(pattern, -1) {
		names = append(names, m[1])
	}
	return names
}

// checkParams validates a route's path parameters and every query parameter.
func checkParams(r *http.Request, names []string) error {
	for _, n := range names {
		if p := jsonguard.NameProblem(r.PathValue(n)); p != "" {
			return badRequest(fmt.Sprintf("bad path: %s %s", n, p))
		}
	}
	raw := r.URL.RawQuery
	if strings.Count(raw, "&") >= maxPairsInOrder {
		// url.ParseQuery also applies a limit to the number of pairs (GODEBUG urlmaxqueryparams)
		// over which it keeps none: a long query is checked through it, as r.URL.Query() sees it.
		q, _ := url.ParseQuery(raw) // malformed pairs are dropped, as r.URL.Query() does
		for k, vs := range q {
			for _, v := range vs {
				if err := checkParam(k, v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// The pairs url.ParseQuery keeps, in order, without building its map (once per request).
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			continue
		}
		if v, err = url.QueryUnescape(v); err != nil {
			continue
		}
		if err := checkParam(k, v); err != nil {
			return err
		}
	}
	return nil
}

// maxPairsInOrder is the number of query pairs checkParams reads itself, well under url.ParseQuery's
// limit.
const maxPairsInOrder = 64

// checkParam applies the name rules to one query parameter.
func checkParam(k, v string) error {
	if p := jsonguard.NameProblem(k); p != "" {
		return badRequest("bad query: a parameter name " + p)
	}
	if p := jsonguard.NameProblem(v); p != "" {
		return badRequest(fmt.Sprintf("bad query: %s %s", printableName(k), p))
	}
	return nil
}

func printableName(k string) string {
	if len(k) > 64 {
		return k[:64] + "…"
	}
	return k
}

// Request ids tie a 5xx body to its log line: the body repeats the id, the log keeps the cause.
type requestIDKey struct{}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// withRequestID takes the caller's X-Request-Id when it is a sane token, or makes one, echoes it in the
// response header and puts it in the request's context.
func withRequestID(w http.ResponseWriter, r *http.Request) *http.Request {
	id := r.Header.Get("X-Request-Id")
	if !validRequestID.MatchString(id) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	w.Header().Set("X-Request-Id", id)
	return r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
