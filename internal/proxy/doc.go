// Package proxy is queen-proxy: it resolves a request's Host to a tenant cluster, authenticates an API key
// or dashboard session, applies the cluster's state, route blocks, plan features, size caps, quotas and
// rate limits, and forwards what passes to the cluster's broker with a short-lived HS256 JWT carrying the
// credential's roles. Every response the proxy produces itself carries a machine-readable `code`
// (errors.go holds the one table).
//
// Locking: limiter.mu (the cluster map) is taken before clusterLimits.mu (one cluster's buckets and
// slots); neither is held across I/O.
package proxy
