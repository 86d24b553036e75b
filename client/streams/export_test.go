package streams

// LegacyWire makes a runner send its cycles as the original runtimes do (no expect, no cycle_id).
func LegacyWire(o *RunOptions) { o.legacyWire = true }
