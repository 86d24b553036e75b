package proxy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/queen-go/queen/internal/proxy/proxystore"
)

// Roles a key or session may carry (the broker's role names).
var knownRoles = []string{"admin", "read-write", "read-only", "write-only"}

func validateRoles(roles []string) error {
	if len(roles) == 0 {
		return newError(CodeBadRequest, "at least one role is required ("+strings.Join(knownRoles, ", ")+")")
	}
	for _, r := range roles {
		if !slices.Contains(knownRoles, r) {
			return newError(CodeBadRequest, fmt.Sprintf("unknown role %q (known: %s)", r, strings.Join(knownRoles, ", ")))
		}
	}
	return nil
}

func newSecret(prefix string) (string, []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	tok := prefix + hex.EncodeToString(b)
	sum := sha256.Sum256([]byte(tok))
	return tok, sum[:]
}

// CreateKey makes a new API key for the named cluster and returns its id and the secret token, which is
// shown once: only its sha256 is stored.
func CreateKey(ctx context.Context, st *proxystore.Store, cluster, name string, roles []string) (id, token string, err error) {
	if err := validateRoles(roles); err != nil {
		return "", "", err
	}
	token, hash := newSecret(keyPrefix)
	id, err = st.CreateKey(ctx, cluster, name, roles, hash)
	return id, token, err
}

// CreateSession makes a dashboard login session for the named cluster; the token is shown once.
func CreateSession(ctx context.Context, st *proxystore.Store, cluster, subject string, roles []string, expires time.Time) (id, token string, err error) {
	if err := validateRoles(roles); err != nil {
		return "", "", err
	}
	token, hash := newSecret(sessionPrefix)
	id, err = st.CreateSession(ctx, cluster, subject, roles, hash, expires)
	return id, token, err
}

// CreateCluster validates and stores a cluster.
func CreateCluster(ctx context.Context, st *proxystore.Store, p proxystore.CreateClusterParams) (int64, error) {
	if p.Name == "" || len(p.Hosts) == 0 || p.Plan == "" {
		return 0, newError(CodeBadRequest, "name, hosts and plan are required")
	}
	if _, err := parseUpstream(p.UpstreamURL); err != nil {
		return 0, newError(CodeBadRequest, err.Error())
	}
	return st.CreateCluster(ctx, p)
}

// CreatePlan validates and stores a plan.
func CreatePlan(ctx context.Context, st *proxystore.Store, p proxystore.Plan) (int64, error) {
	if p.Name == "" {
		return 0, newError(CodeBadRequest, "name is required")
	}
	if p.MaxPayloadBytes < 0 || p.MaxBatchItems < 0 || p.RequestRate < 0 || p.MessageRate < 0 || p.ParkedSlots < 0 {
		return 0, newError(CodeBadRequest, "limits must not be negative")
	}
	for _, err := range []error{CheckBucketRefill("request", p.RequestRate, p.RequestBurst),
		CheckBucketRefill("message", p.MessageRate, p.MessageBurst)} {
		if err != nil {
			return 0, newError(CodeBadRequest, err.Error())
		}
	}
	return st.CreatePlan(ctx, p)
}

// adminHandler is an admin route; a returned error is written through the code table.
type adminHandler func(w http.ResponseWriter, r *http.Request) error

func (s *Server) admin(h adminHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := s.checkAdmin(r)
		if err == nil {
			err = h(w, r)
		}
		if err == nil && r.Method != http.MethodGet {
			s.creds.clear() // what changed may be a cached credential's or cluster's
		}
		if err != nil {
			e := asError(err)
			s.log.WarnContext(r.Context(), "proxy admin request failed", slog.String("code", string(e.Code)),
				slog.String("path", r.URL.Path), slog.Any("error", err))
			writeError(w, e)
		}
	})
}

func (s *Server) checkAdmin(r *http.Request) error {
	want := s.o.AdminToken
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if want == "" || !ok || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return newError(CodeUnauthorized, "admin token required")
	}
	return nil
}

func decode(r *http.Request, v any) error {
	d := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return newError(CodeBadRequest, "bad body: "+err.Error())
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// registerAdmin mounts the admin API under /_proxy/admin/ (bearer QUEEN_PROXY_ADMIN_TOKEN).
func (s *Server) registerAdmin(mux *http.ServeMux) {
	st := s.o.Store
	mux.Handle("POST /_proxy/admin/plans", s.admin(func(w http.ResponseWriter, r *http.Request) error {
		var p proxystore.Plan
		if err := decode(r, &p); err != nil {
			return err
		}
		id, err := CreatePlan(r.Context(), st, p)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, map[string]any{"id": id, "name": p.Name})
	}))
	mux.Handle("POST /_proxy/admin/clusters", s.admin(func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Name        string   `json:"name"`
			Hosts       []string `json:"hosts"`
			UpstreamURL string   `json:"upstreamUrl"`
			Plan        string   `json:"plan"`
			State       string   `json:"state"`
			BillingHold bool     `json:"billingHold"`
		}
		if err := decode(r, &b); err != nil {
			return err
		}
		id, err := CreateCluster(r.Context(), st, proxystore.CreateClusterParams{Name: b.Name, Hosts: b.Hosts,
			UpstreamURL: b.UpstreamURL, Plan: b.Plan, State: b.State, BillingHold: b.BillingHold})
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, map[string]any{"id": id, "name": b.Name})
	}))
	mux.Handle("PATCH /_proxy/admin/clusters/{name}", s.admin(func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			UpstreamURL      *string `json:"upstreamUrl"`
			State            *string `json:"state"`
			Plan             *string `json:"plan"`
			BillingHold      *bool   `json:"billingHold"`
			StorageBytesUsed *int64  `json:"storageBytesUsed"`
		}
		if err := decode(r, &b); err != nil {
			return err
		}
		err := st.UpdateCluster(r.Context(), proxystore.UpdateClusterParams{Name: r.PathValue("name"),
			UpstreamURL: b.UpstreamURL, State: b.State, Plan: b.Plan, BillingHold: b.BillingHold,
			StorageBytesUsed: b.StorageBytesUsed})
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"name": r.PathValue("name"), "updated": true})
	}))
	mux.Handle("PUT /_proxy/admin/clusters/{name}/usage/{month}", s.admin(func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Messages int64 `json:"messages"`
		}
		if err := decode(r, &b); err != nil {
			return err
		}
		if err := st.SetMonthlyMessages(r.Context(), r.PathValue("name"), r.PathValue("month"), b.Messages); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"month": r.PathValue("month"), "messages": b.Messages})
	}))
	mux.Handle("POST /_proxy/admin/clusters/{name}/keys", s.admin(func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Name  string   `json:"name"`
			Roles []string `json:"roles"`
		}
		if err := decode(r, &b); err != nil {
			return err
		}
		id, tok, err := CreateKey(r.Context(), st, r.PathValue("name"), b.Name, b.Roles)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, map[string]any{"id": id, "key": tok, "roles": b.Roles})
	}))
	mux.Handle("DELETE /_proxy/admin/keys/{id}", s.admin(func(w http.ResponseWriter, r *http.Request) error {
		if err := st.RevokeKey(r.Context(), r.PathValue("id")); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "revoked": true})
	}))
	mux.Handle("POST /_proxy/admin/clusters/{name}/sessions", s.admin(func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Subject    string   `json:"subject"`
			Roles      []string `json:"roles"`
			TTLSeconds int64    `json:"ttlSeconds"`
		}
		if err := decode(r, &b); err != nil {
			return err
		}
		if b.TTLSeconds <= 0 {
			b.TTLSeconds = 12 * 3600
		}
		exp := s.o.NowFunc().Add(time.Duration(b.TTLSeconds) * time.Second)
		id, tok, err := CreateSession(r.Context(), st, r.PathValue("name"), b.Subject, b.Roles, exp)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, map[string]any{"id": id, "token": tok, "expiresAt": exp.UTC()})
	}))
	mux.Handle("DELETE /_proxy/admin/sessions/{id}", s.admin(func(w http.ResponseWriter, r *http.Request) error {
		if err := st.RevokeSession(r.Context(), r.PathValue("id")); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "revoked": true})
	}))
}
