// Package faults holds the process-level durability tests: PostgreSQL stopped under load, the broker
// killed with SIGKILL, a torn spool, and a graceful shutdown. Each test owns its PostgreSQL cluster, so
// stopping it disturbs nothing else.
package faults
