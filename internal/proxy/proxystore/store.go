// Package proxystore keeps queen-proxy's own state in PostgreSQL: plans, clusters and their Host names,
// hashed API keys, dashboard sessions and usage counters, in a schema of its own (default queen_proxy).
// It is the only proxy package that imports pgx; SQL lives in migrations/*.sql and queries/*.sql.
package proxystore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/queen-go/queen/internal/pgschema"
)

//go:embed queries/*.sql
var queryFiles embed.FS

// queries holds every named query of queries/*.sql, keyed by its `-- name:` header.
var queries = pgschema.MustQueries(queryFiles, "queries")

// q is the named statement of queries/*.sql.
var q = queries.Get

// Sentinel errors; every driver error is translated by interpret.
var (
	// ErrNotFound means the addressed row does not exist (or is revoked/expired for credentials).
	ErrNotFound = errors.New("proxystore: not found")
	// ErrConflict means a unique name or host is already taken.
	ErrConflict = errors.New("proxystore: already exists")
	// ErrInvalid means the database refused the values (check constraint, bad reference).
	ErrInvalid = errors.New("proxystore: invalid value")
	// ErrUnavailable means PostgreSQL could not be reached.
	ErrUnavailable = errors.New("proxystore: database unavailable")
)

// interpret is the one place driver errors become the package's sentinels.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return fmt.Errorf("%w: %s", ErrConflict, pgErr.Detail)
		case "23503", "23514", "22P02", "23502":
			return fmt.Errorf("%w: %s", ErrInvalid, pgErr.Message)
		}
		return err
	}
	if pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}

// Store is a pool of connections whose search_path is the proxy's schema.
type Store struct {
	pool   *pgxpool.Pool
	schema string
}

// Open connects to url, creates the schema if needed and applies pending migrations.
func Open(ctx context.Context, url, schema string) (*Store, error) {
	if schema == "" {
		schema = "queen_proxy"
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("proxystore: parse database url: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = 16 // every tenant request does one or two lookups; pgx's default (max(4, CPUs)) queues them
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("proxystore: connect: %w", interpret(err))
	}
	s := &Store{pool: pool, schema: schema}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the pool.
func (s *Store) Close() { s.pool.Close() }

// Ping reports whether the proxy's database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("proxystore: ping: %w", err)
	}
	return nil
}

// Plan is a tenant plan: size caps, rates, quotas, ceilings and feature flags. Zero means unlimited for
// rates, slots, quotas and ceilings.
type Plan struct {
	ID                    int64   `json:"id"`
	Name                  string  `json:"name"`
	MaxPayloadBytes       int64   `json:"maxPayloadBytes"`
	MaxBatchItems         int     `json:"maxBatchItems"`
	RequestRate           float64 `json:"requestRate"`
	RequestBurst          float64 `json:"requestBurst"`
	MessageRate           float64 `json:"messageRate"`
	MessageBurst          float64 `json:"messageBurst"`
	ParkedSlots           int     `json:"parkedSlots"`
	MonthlyMessageQuota   int64   `json:"monthlyMessageQuota"`
	StorageQuotaBytes     int64   `json:"storageQuotaBytes"`
	MaxQueues             int     `json:"maxQueues"`
	MaxPartitionsPerQueue int     `json:"maxPartitionsPerQueue"`
	MaxRetentionSeconds   int64   `json:"maxRetentionSeconds"`
	FeatureStreams        bool    `json:"featureStreams"`
	FeatureTraces         bool    `json:"featureTraces"`
	FeatureOperator       bool    `json:"featureOperator"`
}

// Cluster states.
const (
	StateActive    = "active"
	StateSuspended = "suspended"
	StateDeleting  = "deleting"
)

// Cluster is one tenant cell: a broker reached at UpstreamURL, addressed by one or more Host names.
type Cluster struct {
	ID               int64  `json:"id"`
	Name             string `json:"name"`
	UpstreamURL      string `json:"upstreamUrl"`
	State            string `json:"state"`
	BillingHold      bool   `json:"billingHold"`
	StorageBytesUsed int64  `json:"storageBytesUsed"`
	Plan             Plan   `json:"plan"`
}

// CreatePlan stores p (its ID is ignored) and returns its id.
func (s *Store) CreatePlan(ctx context.Context, p Plan) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, q("CreatePlan"), p.Name, p.MaxPayloadBytes, p.MaxBatchItems, p.RequestRate,
		p.RequestBurst, p.MessageRate, p.MessageBurst, p.ParkedSlots, p.MonthlyMessageQuota, p.StorageQuotaBytes,
		p.MaxQueues, p.MaxPartitionsPerQueue, p.MaxRetentionSeconds, p.FeatureStreams, p.FeatureTraces,
		p.FeatureOperator).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("proxystore: create plan %q: %w", p.Name, interpret(err))
	}
	return id, nil
}

// CreateClusterParams are the arguments of [Store.CreateCluster].
type CreateClusterParams struct {
	Name        string
	Hosts       []string
	UpstreamURL string
	Plan        string // plan name
	State       string // default active
	BillingHold bool
}

// CreateCluster stores a cluster and its Host names in one transaction and returns its id.
func (s *Store) CreateCluster(ctx context.Context, p CreateClusterParams) (int64, error) {
	if p.State == "" {
		p.State = StateActive
	}
	var id int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var planID int64
		if err := tx.QueryRow(ctx, q("PlanIDByName"), p.Plan).Scan(&planID); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("plan %q: %w", p.Plan, ErrNotFound)
			}
			return interpret(err)
		}
		if err := tx.QueryRow(ctx, q("CreateCluster"), p.Name, p.UpstreamURL, p.State, planID, p.BillingHold).Scan(&id); err != nil {
			return interpret(err)
		}
		for _, h := range p.Hosts {
			if _, err := tx.Exec(ctx, q("AddClusterHost"), NormalizeHost(h), id); err != nil {
				return interpret(err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("proxystore: create cluster %q: %w", p.Name, err)
	}
	return id, nil
}

// UpdateClusterParams are the arguments of [Store.UpdateCluster]; nil fields stay unchanged.
type UpdateClusterParams struct {
	Name             string
	UpstreamURL      *string
	State            *string
	Plan             *string
	BillingHold      *bool
	StorageBytesUsed *int64
}

// UpdateCluster changes the given fields of the named cluster.
func (s *Store) UpdateCluster(ctx context.Context, p UpdateClusterParams) error {
	var planID *int64
	if p.Plan != nil {
		var id int64
		if err := s.pool.QueryRow(ctx, q("PlanIDByName"), *p.Plan).Scan(&id); err != nil {
			return fmt.Errorf("proxystore: plan %q: %w", *p.Plan, interpret(err))
		}
		planID = &id
	}
	tag, err := s.pool.Exec(ctx, q("UpdateCluster"), p.Name, p.UpstreamURL, p.State, planID, p.BillingHold, p.StorageBytesUsed)
	if err != nil {
		return fmt.Errorf("proxystore: update cluster %q: %w", p.Name, interpret(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("proxystore: cluster %q: %w", p.Name, ErrNotFound)
	}
	return nil
}

// ClusterIDByName resolves a cluster name.
func (s *Store) ClusterIDByName(ctx context.Context, name string) (int64, error) {
	var id int64
	if err := s.pool.QueryRow(ctx, q("ClusterIDByName"), name).Scan(&id); err != nil {
		return 0, fmt.Errorf("proxystore: cluster %q: %w", name, interpret(err))
	}
	return id, nil
}

// NormalizeHost lower-cases a Host header and strips its port.
func NormalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if strings.HasPrefix(h, "[") { // IPv6 literal
		if i := strings.Index(h, "]"); i > 0 {
			return h[:i+1]
		}
		return h
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return strings.TrimSuffix(h, ".")
}

func clusterDest(c *Cluster) []any {
	p := &c.Plan
	return []any{&c.ID, &c.Name, &c.UpstreamURL, &c.State, &c.BillingHold, &c.StorageBytesUsed,
		&p.ID, &p.Name, &p.MaxPayloadBytes, &p.MaxBatchItems, &p.RequestRate, &p.RequestBurst, &p.MessageRate,
		&p.MessageBurst, &p.ParkedSlots, &p.MonthlyMessageQuota, &p.StorageQuotaBytes, &p.MaxQueues,
		&p.MaxPartitionsPerQueue, &p.MaxRetentionSeconds, &p.FeatureStreams, &p.FeatureTraces, &p.FeatureOperator}
}

// ClusterByHost resolves a Host header to its cluster and plan.
func (s *Store) ClusterByHost(ctx context.Context, host string) (Cluster, error) {
	var c Cluster
	if err := s.pool.QueryRow(ctx, q("ClusterByHost"), NormalizeHost(host)).Scan(clusterDest(&c)...); err != nil {
		return Cluster{}, fmt.Errorf("proxystore: cluster for host %q: %w", host, interpret(err))
	}
	return c, nil
}

// ClusterAndKey resolves a Host header and an API key hash in one round trip. A missing cluster is
// ErrNotFound; a cluster without that active key returns ok == false.
func (s *Store) ClusterAndKey(ctx context.Context, host string, hash []byte) (c Cluster, cred Credential, ok bool, err error) {
	var id *uuid.UUID
	var roles []string
	dest := append(clusterDest(&c), &id, &roles)
	if err := s.pool.QueryRow(ctx, q("ClusterAndKeyByHost"), NormalizeHost(host), hash).Scan(dest...); err != nil {
		return Cluster{}, Credential{}, false, fmt.Errorf("proxystore: cluster for host %q: %w", host, interpret(err))
	}
	if id == nil {
		return c, Credential{}, false, nil
	}
	return c, Credential{ID: id.String(), Subject: id.String(), Roles: roles}, true, nil
}

// Credential is an authenticated API key or session.
type Credential struct {
	ID      string // key or session id; the JWT sub
	Subject string
	Roles   []string
	Session bool
	Expires time.Time // a session's end; zero for a key
}

// CreateKey stores the hash of a new API key for the named cluster and returns the key id.
func (s *Store) CreateKey(ctx context.Context, cluster, name string, roles []string, hash []byte) (string, error) {
	cid, err := s.ClusterIDByName(ctx, cluster)
	if err != nil {
		return "", err
	}
	id := uuid.New()
	if _, err := s.pool.Exec(ctx, q("CreateKey"), id, cid, name, hash, roles); err != nil {
		return "", fmt.Errorf("proxystore: create key for %q: %w", cluster, interpret(err))
	}
	return id.String(), nil
}

// ActiveKey finds the unrevoked key with this hash on the cluster.
func (s *Store) ActiveKey(ctx context.Context, clusterID int64, hash []byte) (Credential, error) {
	var id uuid.UUID
	var roles []string
	if err := s.pool.QueryRow(ctx, q("ActiveKeyByHash"), clusterID, hash).Scan(&id, &roles); err != nil {
		return Credential{}, fmt.Errorf("proxystore: api key: %w", interpret(err))
	}
	return Credential{ID: id.String(), Subject: id.String(), Roles: roles}, nil
}

// RevokeKey revokes a key; it takes effect on the next request.
func (s *Store) RevokeKey(ctx context.Context, id string) error {
	return s.revoke(ctx, q("RevokeKey"), "key", id)
}

// revoke runs a statement that revokes the credential (what: key or session) with this id.
func (s *Store) revoke(ctx context.Context, stmt, what, id string) error {
	uid, err := uuid.Parse(id)
	if err != nil {
		return fmt.Errorf("proxystore: %s id %q: %w", what, id, ErrInvalid)
	}
	tag, err := s.pool.Exec(ctx, stmt, uid)
	if err != nil {
		return fmt.Errorf("proxystore: revoke %s %s: %w", what, id, interpret(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("proxystore: %s %s: %w", what, id, ErrNotFound)
	}
	return nil
}

// CreateSession stores the hash of a new dashboard session token and returns the session id.
func (s *Store) CreateSession(ctx context.Context, cluster, subject string, roles []string, hash []byte, expires time.Time) (string, error) {
	cid, err := s.ClusterIDByName(ctx, cluster)
	if err != nil {
		return "", err
	}
	id := uuid.New()
	if _, err := s.pool.Exec(ctx, q("CreateSession"), id, cid, hash, subject, roles, expires); err != nil {
		return "", fmt.Errorf("proxystore: create session for %q: %w", cluster, interpret(err))
	}
	return id.String(), nil
}

// ActiveSession finds the unrevoked, unexpired session with this hash on the cluster.
func (s *Store) ActiveSession(ctx context.Context, clusterID int64, hash []byte, now time.Time) (Credential, error) {
	var id uuid.UUID
	var c Credential
	if err := s.pool.QueryRow(ctx, q("ActiveSessionByHash"), clusterID, hash, now).Scan(&id, &c.Subject, &c.Roles, &c.Expires); err != nil {
		return Credential{}, fmt.Errorf("proxystore: session: %w", interpret(err))
	}
	c.ID = id.String()
	c.Session = true
	return c, nil
}

// RevokeSession invalidates a session at once.
func (s *Store) RevokeSession(ctx context.Context, id string) error {
	return s.revoke(ctx, q("RevokeSession"), "session", id)
}

// Month is the usage period key of t (UTC, YYYY-MM).
func Month(t time.Time) string { return t.UTC().Format("2006-01") }

// MonthlyMessages returns the messages counted for the cluster in month.
func (s *Store) MonthlyMessages(ctx context.Context, clusterID int64, month string) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, q("MonthlyMessages"), clusterID, month).Scan(&n); err != nil {
		return 0, fmt.Errorf("proxystore: monthly usage: %w", interpret(err))
	}
	return n, nil
}

// ReserveMessages takes n messages of the month's quota atomically, across every proxy sharing this
// database: ok is false, and nothing is taken, when used+n would exceed quota (used is then the count
// found). Release what a push did not use with [Store.ReleaseMessages].
func (s *Store) ReserveMessages(ctx context.Context, clusterID int64, month string, n, quota int64) (ok bool, used int64, err error) {
	var reserved *int64
	if err := s.pool.QueryRow(ctx, q("ReserveMessages"), clusterID, month, n, quota).Scan(&reserved, &used); err != nil {
		return false, 0, fmt.Errorf("proxystore: reserve messages: %w", interpret(err))
	}
	if reserved == nil {
		return false, used, nil
	}
	return true, *reserved - n, nil
}

// ReleaseMessages gives back n reserved messages of month (a push the broker refused).
func (s *Store) ReleaseMessages(ctx context.Context, clusterID int64, month string, n int64) error {
	if _, err := s.pool.Exec(ctx, q("ReleaseMessages"), clusterID, month, n); err != nil {
		return fmt.Errorf("proxystore: release messages: %w", interpret(err))
	}
	return nil
}

// AddUsage counts an accepted push: messages into month, bytes into the month and the storage total.
func (s *Store) AddUsage(ctx context.Context, clusterID int64, month string, messages, bytes int64) error {
	if _, err := s.pool.Exec(ctx, q("AddUsage"), clusterID, month, messages, bytes); err != nil {
		return fmt.Errorf("proxystore: add usage: %w", interpret(err))
	}
	return nil
}

// SetMonthlyMessages overwrites the month's message counter (operator correction, tests).
func (s *Store) SetMonthlyMessages(ctx context.Context, cluster, month string, messages int64) error {
	cid, err := s.ClusterIDByName(ctx, cluster)
	if err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, q("SetMonthlyMessages"), cid, month, messages); err != nil {
		return fmt.Errorf("proxystore: set usage: %w", interpret(err))
	}
	return nil
}

// QueuePartition names one partition of one queue.
type QueuePartition struct{ Queue, Partition string }

// PartitionUsage reports how many queues the cluster has and which partitions of the given queues exist.
func (s *Store) PartitionUsage(ctx context.Context, clusterID int64, queues []string) (int, map[QueuePartition]bool, error) {
	var n int
	if err := s.pool.QueryRow(ctx, q("CountQueues"), clusterID).Scan(&n); err != nil {
		return 0, nil, fmt.Errorf("proxystore: count queues: %w", interpret(err))
	}
	rows, err := s.pool.Query(ctx, q("PartitionsOfQueues"), clusterID, queues)
	if err != nil {
		return 0, nil, fmt.Errorf("proxystore: partitions: %w", interpret(err))
	}
	defer rows.Close()
	known := map[QueuePartition]bool{}
	for rows.Next() {
		var qp QueuePartition
		if err := rows.Scan(&qp.Queue, &qp.Partition); err != nil {
			return 0, nil, fmt.Errorf("proxystore: partitions: %w", interpret(err))
		}
		known[qp] = true
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("proxystore: partitions: %w", interpret(err))
	}
	return n, known, nil
}

// ForgetQueue drops the partitions recorded for one queue of the cluster.
func (s *Store) ForgetQueue(ctx context.Context, clusterID int64, queue string) error {
	if _, err := s.pool.Exec(ctx, q("ForgetQueue"), clusterID, queue); err != nil {
		return fmt.Errorf("proxystore: forget queue: %w", interpret(err))
	}
	return nil
}

// RecordPartitions remembers partitions the cluster has pushed to.
func (s *Store) RecordPartitions(ctx context.Context, clusterID int64, ps []QueuePartition) error {
	if len(ps) == 0 {
		return nil
	}
	qs := make([]string, len(ps))
	pp := make([]string, len(ps))
	for i, p := range ps {
		qs[i], pp[i] = p.Queue, p.Partition
	}
	if _, err := s.pool.Exec(ctx, q("RecordPartitions"), clusterID, qs, pp); err != nil {
		return fmt.Errorf("proxystore: record partitions: %w", interpret(err))
	}
	return nil
}
