package streams

import "math"

// GateContext is what a gate function sees besides the value. State is the key's state, mutable:
// the mutations of the allowed values are committed with the cycle, and later values of the same
// key in the same cycle see them.
type GateContext struct {
	State        map[string]any
	StreamTimeMs int64 // wall clock of the cycle, epoch ms
	PartitionID  string
	Partition    string
	Key          string
}

// GateFunc decides, in order, whether each value may pass. The first denial stops the cycle there:
// the allowed prefix is committed (acked with the lease kept), and the denied value and everything
// after it come back, in order, when the lease expires. So a gated partition's throughput is bounded
// by the source queue's leaseTime: sustainable rate = min(refill rate, capacity / lease seconds).
type GateFunc func(v any, g *GateContext) (bool, error)

// CostFunc prices a value for the rate-limit gates (nil: every value costs 1).
type CostFunc func(v any) float64

func costOf(fn CostFunc, v any) float64 {
	if fn == nil {
		return 1
	}
	c := fn(v)
	if math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
		return 1
	}
	return c
}

func stateNum(st map[string]any, k string, def float64) float64 {
	if n, ok := asNumber(st[k]); ok {
		return n
	}
	return def
}

// TokenBucketGate allows values while the key's bucket has tokens: it holds capacity tokens and
// refills refillPerSec per second. A value costs cost(v) tokens (nil: 1; an invalid or negative cost
// counts as 1); a zero cost passes without consuming. State: tokens, lastRefillAt, allowedTotal,
// consumedTotal.
func TokenBucketGate(capacity, refillPerSec float64, cost CostFunc) GateFunc {
	return func(v any, g *GateContext) (bool, error) {
		st, now := g.State, float64(g.StreamTimeMs)
		tokens := stateNum(st, "tokens", capacity)
		last := stateNum(st, "lastRefillAt", now)
		if elapsed := (now - last) / 1000; elapsed > 0 {
			tokens = math.Min(capacity, tokens+elapsed*refillPerSec)
		}
		st["tokens"], st["lastRefillAt"] = tokens, now
		c := costOf(cost, v)
		if c > tokens {
			return false, nil
		}
		st["tokens"] = tokens - c
		st["allowedTotal"] = stateNum(st, "allowedTotal", 0) + 1
		st["consumedTotal"] = stateNum(st, "consumedTotal", 0) + c
		return true, nil
	}
}

// SlidingWindowGate allows at most limit cost units per windowSec, estimated with two buckets (the
// previous window weighted by how much of it still overlaps, plus the current one). State:
// previousCount, currentCount, window.
func SlidingWindowGate(limit, windowSec float64, cost CostFunc) GateFunc {
	winMs := windowSec * 1000
	return func(v any, g *GateContext) (bool, error) {
		st, now := g.State, float64(g.StreamTimeMs)
		idx := math.Floor(now / winMs)
		prev, cur := stateNum(st, "previousCount", 0), stateNum(st, "currentCount", 0)
		if w, ok := asNumber(st["window"]); !ok || w != idx {
			if ok && w == idx-1 {
				prev = cur
			} else {
				prev = 0
			}
			cur = 0
		}
		st["window"], st["previousCount"], st["currentCount"] = idx, prev, cur
		frac := (now - idx*winMs) / winMs
		c := costOf(cost, v)
		if prev*(1-frac)+cur+c > limit {
			return false, nil
		}
		st["currentCount"] = cur + c
		return true, nil
	}
}
