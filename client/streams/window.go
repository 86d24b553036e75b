package streams

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Window kinds, as they appear in the config hash ("window-<kind>").
const (
	tumbling = "tumbling"
	sliding  = "sliding"
	session  = "session"
	cron     = "cron"
)

type window struct {
	kind        string
	seconds     float64 // tumbling
	size, slide float64 // sliding
	gap         float64 // session
	every       string  // cron

	grace       float64 // seconds a closed window waits before it is emitted
	idleFlushMs int
	idleSet     bool
	eventTime   func(v any) any
	lateness    float64 // seconds the watermark trails the newest event
	onLate      string
}

// WindowOption tunes a window.
type WindowOption func(*window)

// WithGracePeriod delays the emission of a closed window by seconds.
func WithGracePeriod(seconds float64) WindowOption { return func(w *window) { w.grace = seconds } }

// WithIdleFlushMs sets how often quiet partitions are checked for windows to close (0 disables;
// defaults: 5000 tumbling and sliding, 1000 session, 30000 cron).
func WithIdleFlushMs(ms int) WindowOption {
	return func(w *window) { w.idleFlushMs, w.idleSet = ms, true }
}

// WithEventTime switches the window to event time: fn returns the value's time as epoch
// milliseconds (a number), a time.Time or an ISO-8601 string. Windows then close on the partition's
// watermark instead of the broker's clock.
func WithEventTime(fn func(v any) any) WindowOption { return func(w *window) { w.eventTime = fn } }

// WithAllowedLateness lets the watermark trail the newest event by seconds, so events that much out
// of order are still counted.
func WithAllowedLateness(seconds float64) WindowOption {
	return func(w *window) { w.lateness = seconds }
}

// WithOnLate chooses what happens to an event older than the watermark: "drop" (the default) counts
// and discards it, "include" folds it in (which can re-open and re-emit a window already flushed).
func WithOnLate(policy string) WindowOption { return func(w *window) { w.onLate = policy } }

func (s *Stream) window(w *window, opts []WindowOption) *Stream {
	w.onLate = "drop"
	for _, o := range opts {
		o(w)
	}
	if !w.idleSet {
		switch w.kind {
		case session:
			w.idleFlushMs = 1000
		case cron:
			w.idleFlushMs = 30000
		default:
			w.idleFlushMs = 5000
		}
	}
	return s.with(operator{kind: kWindow, win: w})
}

// WindowTumbling groups values into back-to-back windows of seconds.
func (s *Stream) WindowTumbling(seconds float64, opts ...WindowOption) *Stream {
	return s.window(&window{kind: tumbling, seconds: seconds}, opts)
}

// WindowSliding groups values into windows of size seconds starting every slide seconds (size must
// be a multiple of slide); each value belongs to size/slide windows.
func (s *Stream) WindowSliding(size, slide float64, opts ...WindowOption) *Stream {
	return s.window(&window{kind: sliding, size: size, slide: slide}, opts)
}

// WindowSession groups each key's values into sessions that close after gap seconds of silence.
func (s *Stream) WindowSession(gap float64, opts ...WindowOption) *Stream {
	return s.window(&window{kind: session, gap: gap}, opts)
}

// WindowCron groups values into calendar-aligned windows: every is "second", "minute", "hour",
// "day" or "week" (weeks start Monday 00:00 UTC).
func (s *Stream) WindowCron(every string, opts ...WindowOption) *Stream {
	return s.window(&window{kind: cron, every: every}, opts)
}

var cronSizes = map[string]float64{"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}

func (w *window) validate() error {
	switch {
	case w.onLate != "drop" && w.onLate != "include":
		return fmt.Errorf("streams: onLate must be drop or include (got %q)", w.onLate)
	case w.grace < 0 || w.lateness < 0 || w.idleFlushMs < 0:
		return errors.New("streams: grace period, allowed lateness and idle flush cannot be negative")
	}
	switch w.kind {
	case tumbling:
		if !(w.seconds > 0) {
			return errors.New("streams: WindowTumbling needs seconds > 0")
		}
	case sliding:
		if !(w.size > 0 && w.slide > 0) {
			return errors.New("streams: WindowSliding needs size > 0 and slide > 0")
		}
		if r := math.Mod(w.size, w.slide); r != 0 {
			return fmt.Errorf("streams: WindowSliding size (%v) must be a multiple of slide (%v)", w.size, w.slide)
		}
	case session:
		if !(w.gap > 0) {
			return errors.New("streams: WindowSession needs gap > 0")
		}
	case cron:
		if _, ok := cronSizes[w.every]; !ok {
			return fmt.Errorf("streams: WindowCron every must be second, minute, hour, day or week (got %q)", w.every)
		}
	}
	return nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// tag prefixes the state keys of this window operator.
func (w *window) tag() string {
	switch w.kind {
	case tumbling:
		return "tumb:" + num(w.seconds)
	case sliding:
		return "slide:" + num(w.size) + ":" + num(w.slide)
	case session:
		return "sess:" + num(w.gap)
	default:
		return "cron:" + w.every
	}
}

// sizeMs is the length of a fixed window.
func (w *window) sizeMs() int64 {
	switch w.kind {
	case tumbling:
		return int64(w.seconds * 1000)
	case sliding:
		return int64(w.size * 1000)
	case cron:
		return int64(cronSizes[w.every] * 1000)
	}
	return 0
}

// weekOffsetMs shifts week windows from the epoch (a Thursday) to Monday 00:00 UTC.
const weekOffsetMs = 4 * 86400 * 1000

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// starts returns the start (epoch ms) of every fixed window containing t.
func (w *window) starts(t int64) []int64 {
	switch w.kind {
	case sliding:
		slide := int64(w.slide * 1000)
		size := w.sizeMs()
		base := floorDiv(t, slide) * slide
		var out []int64
		for i := int64(0); i < size/slide; i++ {
			st := base - i*slide
			if st <= t && t < st+size {
				out = append(out, st)
			}
		}
		return out
	case cron:
		size := w.sizeMs()
		if w.every == "week" {
			return []int64{floorDiv(t-weekOffsetMs, size)*size + weekOffsetMs}
		}
		return []int64{floorDiv(t, size) * size}
	default:
		size := w.sizeMs()
		return []int64{floorDiv(t, size) * size}
	}
}

func (w *window) graceMs() int64    { return int64(w.grace * 1000) }
func (w *window) latenessMs() int64 { return int64(w.lateness * 1000) }
func (w *window) gapMs() int64      { return int64(w.gap * 1000) }

// isoMs formats epoch ms the way the state keys carry it: ISO-8601 UTC with milliseconds.
func isoMs(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// eventTimeMs reads an event-time extractor's answer.
func eventTimeMs(v any) (int64, error) {
	switch t := v.(type) {
	case float64:
		return int64(t), nil
	case int:
		return int64(t), nil
	case int64:
		return t, nil
	case json.Number:
		f, err := t.Float64()
		return int64(f), err
	case time.Time:
		return t.UnixMilli(), nil
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z07:00", "2006-01-02"} {
			if p, err := time.Parse(layout, t); err == nil {
				return p.UnixMilli(), nil
			}
		}
		return 0, fmt.Errorf("event time %q is not an ISO-8601 time", t)
	}
	return 0, fmt.Errorf("event time %v (%T) is not epoch ms, a time.Time or an ISO-8601 string", v, v)
}

// reducer folds values into an accumulator: a user function or a named-field aggregate.
type reducer struct {
	fn         ReduceFunc
	initial    any
	hasInitial bool

	aggregate bool
	fields    []string
	extract   map[string]Extractor
}

// fresh returns a new accumulator: a deep (JSON) copy of the initial value, so every window starts
// from its own copy and fresh and reloaded accumulators look alike.
func (r *reducer) fresh() (any, error) {
	if r.aggregate {
		acc := map[string]any{}
		for _, f := range r.fields {
			switch f {
			case "min", "max", "avg":
				acc[f] = nil
			default:
				acc[f] = 0.0
			}
		}
		return acc, nil
	}
	return jsonCopy(r.initial)
}

func jsonCopy(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("streams: reduce initial value: %w", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func asNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func (r *reducer) fold(acc, v any) (any, error) {
	if !r.aggregate {
		return r.fn(acc, v)
	}
	m, ok := acc.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	for _, f := range r.fields {
		var x any
		if ex := r.extract[f]; ex != nil {
			x = ex(v)
		}
		n, isNum := asNumber(x)
		cur, _ := asNumber(m[f])
		switch f {
		case "count":
			if !isNum {
				n = 1
			}
			m[f] = cur + n
		case "min", "max":
			if !isNum {
				continue
			}
			if m[f] == nil || (f == "min" && n < cur) || (f == "max" && n > cur) {
				m[f] = n
			}
		case "avg":
			if !isNum {
				continue
			}
			s, _ := asNumber(m["__avg_sum"])
			c, _ := asNumber(m["__avg_count"])
			s, c = s+n, c+1
			m["__avg_sum"], m["__avg_count"], m[f] = s, c, s/c
		default:
			if isNum {
				m[f] = cur + n
			}
		}
	}
	return m, nil
}
