package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/queen-go/queen/internal/httpx"
	"github.com/queen-go/queen/internal/proxy/proxystore"
)

// errUpstreamTimeout is the cancel cause of a forwarded request that ran out of time.
var errUpstreamTimeout = errors.New("proxy: upstream did not answer in time")

type forwardKey struct{}

// forwardInfo travels in the outgoing request's context from forward to rewrite.
type forwardInfo struct {
	target       *url.URL
	path         string
	token        string
	body         []byte // the request's body, read whole before forwarding
	inspectTxn   bool   // read the transaction's answer to learn whether its pushes committed
	txnCommitted bool
}

// copyBuffers reuses the buffers the answers are copied through: without a pool, ReverseProxy makes
// (and zeroes) a 32 KiB buffer per request, however small the answer.
type copyBuffers struct{ p sync.Pool }

func (b *copyBuffers) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *copyBuffers) Put(buf []byte) { b.p.Put(&buf) }

// maxTxnAnswer bounds how much of a transaction answer is buffered to read its success flag.
const maxTxnAnswer = 16 << 20

// modifyResponse reads a transaction's answer (always 200) for its success flag, then replays it.
func (s *Server) modifyResponse(res *http.Response) error {
	fi, _ := res.Request.Context().Value(forwardKey{}).(*forwardInfo)
	if fi == nil || !fi.inspectTxn || res.StatusCode != http.StatusOK {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxTxnAnswer))
	_ = res.Body.Close()
	if err != nil {
		return err
	}
	var ans struct {
		Success bool `json:"success"`
	}
	fi.txnCommitted = json.Unmarshal(b, &ans) == nil && ans.Success
	res.Body = io.NopCloser(bytes.NewReader(b))
	return nil
}

// mintToken signs the short-lived HS256 JWT the broker verifies: sub = key (or session) id, roles = the
// credential's role set. It uses the wall clock, since the broker checks exp against its own.
func (s *Server) mintToken(cluster string, cred proxystore.Credential) (string, error) {
	now := time.Now()
	claims := jwt.MapClaims{
		"sub":     cred.ID,
		"roles":   cred.Roles,
		"iat":     now.Unix(),
		"exp":     now.Add(s.o.JWTTTL).Unix(),
		"iss":     "queen-proxy",
		"cluster": cluster,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.o.JWTSecret)
}

// parseUpstream accepts only absolute http(s) URLs with a host.
func parseUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %q is not an absolute http(s) URL", raw)
	}
	return u, nil
}

// forward sends the request to the cluster's broker. The deadline is the proxy's timeout plus a waiting
// pop's own timeout. A pushed batch answered 201 is counted into the usage counters.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, req *request) error {
	target, err := parseUpstream(req.cluster.UpstreamURL)
	if err != nil {
		return wrapError(CodeBadGateway, "bad upstream URI", err)
	}
	ctx, cancel := context.WithTimeoutCause(r.Context(), s.o.UpstreamTimeout+req.timeout, errUpstreamTimeout)
	defer cancel()
	fi := &forwardInfo{target: target, path: req.path, token: req.token, body: req.body, inspectTxn: req.push != nil && req.push.txn}
	ctx = context.WithValue(ctx, forwardKey{}, fi)
	out := r.WithContext(ctx)
	out.Body = req.bodyReader()
	out.ContentLength = int64(len(req.body))
	sw := &statusWriter{StatusWriter: httpx.StatusWriter{ResponseWriter: w}}
	s.rp.ServeHTTP(sw, out)
	if sw.failed != nil {
		// No answer: the broker may have stored the push all the same, so its reservation stays taken
		// (a quota may undercount a lost answer, never overrun).
		req.reserved = 0
		return sw.failed // nothing was written: ServeHTTP answers with the code
	}
	s.metrics.Decisions.WithLabelValues(req.cluster.Name, "forwarded").Inc()
	if req.push != nil && (sw.Status == http.StatusCreated || (req.push.txn && fi.txnCommitted)) {
		s.countPush(context.WithoutCancel(r.Context()), req)
	}
	if q, ok := strings.CutPrefix(req.path, queuePath); ok && r.Method == http.MethodDelete && sw.Status == http.StatusOK && q != "" && !strings.Contains(q, "/") {
		s.forgetQueue(context.WithoutCancel(r.Context()), req.cluster, q)
	}
	return nil
}

// queuePath prefixes a queue's resource; DELETE on it deletes the queue.
const queuePath = "/api/v1/resources/queues/"

// forgetQueue drops a deleted queue from the known partitions, so that it no longer counts against the
// plan's ceilings. A queue deleted at the broker without going through a proxy keeps counting.
func (s *Server) forgetQueue(ctx context.Context, c proxystore.Cluster, queue string) {
	s.known.forgetQueue(c.ID, queue)
	if err := s.o.Store.ForgetQueue(ctx, c.ID, queue); err != nil {
		s.log.ErrorContext(ctx, "proxy partition forget failed", slog.String("cluster", c.Name), slog.String("queue", queue), slog.Any("error", err))
	}
}

// countPush records an accepted push in the usage counters and the known partitions; messages already
// reserved against the quota are settled rather than counted twice.
func (s *Server) countPush(ctx context.Context, req *request) {
	c := req.cluster
	messages := int64(len(req.push.Items)) - req.reserved
	req.reserved = 0
	if err := s.ledger.accept(ctx, c, req.month, messages, req.push.bytes); err != nil {
		s.log.ErrorContext(ctx, "proxy usage update failed", slog.String("cluster", c.Name), slog.Any("error", err))
	}
	if len(req.parts) > 0 && !req.partsKnown {
		if err := s.o.Store.RecordPartitions(ctx, c.ID, req.parts); err != nil {
			s.log.ErrorContext(ctx, "proxy partition record failed", slog.String("cluster", c.Name), slog.Any("error", err))
		} else {
			s.known.add(c.ID, req.parts, s.o.NowFunc())
		}
	}
}

// rewrite points the outgoing request at the broker and replaces the tenant's credential with the JWT.
func (s *Server) rewrite(pr *httputil.ProxyRequest) {
	fi := pr.Out.Context().Value(forwardKey{}).(*forwardInfo)
	pr.Out.URL.Path = ""
	pr.Out.URL.RawPath = ""
	pr.SetURL(fi.target)
	pr.Out.URL.Path = singleJoin(fi.target.Path, fi.path)
	pr.Out.URL.RawPath = ""
	pr.Out.Header.Del("Cookie")
	pr.Out.Header.Set("Authorization", "Bearer "+fi.token)
	pr.SetXForwarded()
	if fi.body != nil {
		// ReverseProxy hides the body behind a wrapper the Transport does not recognise as in memory, so
		// it writes the headers and the body in two writes (and the broker reads them in two). A body
		// it recognises goes out with its headers in one write; GetBody lets the Transport resend it
		// when a pooled connection turns out closed before anything was written.
		pr.Out.Body = io.NopCloser(bytes.NewReader(fi.body))
		pr.Out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(fi.body)), nil }
	}
}

func singleJoin(base, p string) string {
	if base == "" || base == "/" {
		return p
	}
	if base[len(base)-1] == '/' {
		base = base[:len(base)-1]
	}
	return base + p
}

// upstreamError maps a failed round trip: our deadline is 504 upstream_timeout, anything else 502.
func (s *Server) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	switch {
	case errors.Is(context.Cause(r.Context()), errUpstreamTimeout):
		e = wrapError(CodeUpstreamTimeout, "the broker did not answer in time", err)
	case r.Context().Err() != nil && errors.Is(context.Cause(r.Context()), context.Canceled):
		// The client went away; there is nobody to answer.
		e = wrapError(CodeClientClosed, "", err)
	default:
		e = wrapError(CodeBadGateway, "upstream unreachable", err)
	}
	if sw, ok := w.(*statusWriter); ok && sw.Status == 0 {
		sw.failed = e // reported and written by ServeHTTP
		return
	}
	writeError(w, e)
}

// statusWriter is the forwarding's writer: the status written, and the failure of a round trip
// that wrote nothing (reported and written by ServeHTTP).
type statusWriter struct {
	httpx.StatusWriter
	failed *Error
}
