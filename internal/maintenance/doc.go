// Package maintenance runs the broker's periodic jobs: the statistics refresh with the flush of the
// operation counters, retention, the maxWaitTimeSeconds eviction, the vacuum of pending_partitions,
// which claims and consumption fill with dead rows, and the analyze of the hot tables once they
// outgrow their statistics. Each is a Loop with one lifecycle (Start, idempotent Stop,
// Started/Stopped); the broker starts and stops them from one list. The jobs that touch shared
// tables take an advisory lock, so one broker does each pass.
package maintenance
