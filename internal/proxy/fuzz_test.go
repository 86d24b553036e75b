package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/proxy/proxystore"
)

// FuzzRequestPath sends fuzzed requests (Host, credential, method, path, body) through the proxy's whole
// request path on a real listener. A selector byte picks the valid Host and key or the fuzzed ones, so
// that inputs get past authentication. Whatever comes in, the proxy never panics or fails internally:
// every answer is either the broker's (the stub upstream, which also checks the minted token) or a proxy
// error whose code and status agree with the code table.
func FuzzRequestPath(f *testing.F) {
	var forwardedBad = make(chan string, 1)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return []byte(testSecret), nil },
			jwt.WithValidMethods([]string{"HS256"})); err != nil {
			select {
			case forwardedBad <- err.Error():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Stub-Upstream", "1")
		w.WriteHeader(http.StatusCreated)
	})
	upstream := startStub(f, up)
	b := newBundle(f, bundleOpts{realClock: true, maxBody: 4096})
	b.plan(f, "fuzz", func(p *proxystore.Plan) {
		p.MaxPayloadBytes, p.MaxBatchItems = 200, 5
		p.MessageRate, p.MessageBurst = 1e6, 3
		p.MonthlyMessageQuota, p.MaxQueues, p.MaxPartitionsPerQueue, p.MaxRetentionSeconds = 1e12, 20, 20, 3600
	})
	host, key, _ := b.cluster(f, "fuzz", "fuzz", upstream)
	for _, s := range []struct {
		sel               byte
		host, token, path string
		body              string
	}{
		{0, "", "", "/api/v1/push", `{"items":[{"queue":"q","partition":"p","payload":{"a":1}}]}`},
		{0, "", "", "/api/v1/push", `{"items":[{"queue":"q"},{"queue":"q"},{"queue":"q"},{"queue":"q"}]}`},
		{0, "", "", "/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"q","payload":"x"}]},{"type":"push","queue":"r","data":1}]}`},
		{0, "", "", "/streams/v1/cycle", `{"push_items":[{"queue":"s","payload":[1,2]}]}`},
		{0, "", "", "/api/v1/configure", `{"queue":"q","options":{"retentionSeconds":99999}}`},
		{0, "", "", "/api/v1/pop/queue/q?wait=true&timeout=1", ``},
		{0, "", "", "/api/v1/../../internal/api/x", `{}`},
		{1, "FUZZ.queen.test.:1", "qk_x", "/health", ``},
		{3, "nobody.example", "qs_" + strings.Repeat("a", 40), "/_proxy/admin/plans", `{"name":"x"}`},
	} {
		f.Add(s.sel, s.host, s.token, s.path, []byte(s.body))
	}
	methods := []string{"POST", "GET", "PUT", "DELETE", "PATCH"}
	client := &http.Client{Timeout: 30 * time.Second}
	f.Fuzz(func(t *testing.T, sel byte, fHost, fToken, fPath string, body []byte) {
		h, tok := host, key
		if sel&1 != 0 {
			h = fHost
		}
		if sel&2 != 0 {
			tok = fToken
		}
		u, err := url.Parse(b.url)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + strings.TrimPrefix(fPath, "/")
		if p, q, ok := strings.Cut(fPath, "?"); ok {
			u.Path, u.RawQuery = "/"+strings.TrimPrefix(p, "/"), targetSafe(q)
		}
		req, err := http.NewRequestWithContext(t.Context(), methods[int(sel>>2)%len(methods)], u.String(), bytes.NewReader(body))
		if err != nil {
			return // not a request a client can send
		}
		req.Host = h
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := client.Do(req)
		if err != nil {
			return // the client refused the Host or header value before sending
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		select {
		case msg := <-forwardedBad:
			t.Fatalf("the broker got a token it cannot verify: %s", msg)
		default:
		}
		if res.Header.Get("X-Stub-Upstream") == "1" {
			return
		}
		var e struct {
			Error string     `json:"error"`
			Code  proxy.Code `json:"code"`
		}
		if err := json.Unmarshal(got, &e); err != nil || e.Code == "" || e.Error == "" {
			t.Fatalf("%d %q: not a proxy error envelope", res.StatusCode, got)
		}
		if e.Code == proxy.CodeInternalError || res.StatusCode != (&proxy.Error{Code: e.Code}).Status() {
			t.Fatalf("%d %q for %s %s", res.StatusCode, got, req.Method, u)
		}
	})
}

// targetSafe percent-encodes the bytes a request line cannot carry (controls, space, non-ASCII, '#'):
// Go's client sends a raw query as it is, and a request line with a space in it is refused by the HTTP
// parser ("400 Bad Request", before any handler) which is not the proxy's request path.
func targetSafe(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if c := q[i]; c <= ' ' || c >= 0x7f || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// startStub serves h on a loopback listener for the life of the test.
func startStub(tb testing.TB, h http.Handler) string {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.URL
}
