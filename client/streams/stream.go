package streams

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Context describes the value an operator is looking at: where it came from and, for the values a
// window emits, which window it closes.
type Context struct {
	Partition   string // source partition name
	PartitionID string // source partition id
	Key         string // the envelope key: the source partition id unless KeyBy set one
	// Window fields, set on values emitted by a window (zero otherwise). Times are epoch ms.
	WindowKey   string
	WindowStart int64
	WindowEnd   int64
}

// Values are decoded JSON: map[string]any, []any, float64, string, bool or nil. Accumulators are
// stored as JSON between cycles, so a reducer sees the same decoded forms for a fresh and a
// reloaded accumulator.

// MapFunc transforms a value.
type MapFunc func(v any, c Context) (any, error)

// FilterFunc keeps a value when it returns true.
type FilterFunc func(v any, c Context) (bool, error)

// FlatMapFunc turns a value into zero or more values.
type FlatMapFunc func(v any, c Context) ([]any, error)

// KeyFunc names the key a value is windowed, reduced or gated under.
type KeyFunc func(v any, c Context) (string, error)

// ReduceFunc folds a value into the accumulator of its window and key.
type ReduceFunc func(acc, v any) (any, error)

// Extractor reads the number an aggregate field folds (see [Stream.Aggregate]).
type Extractor func(v any) any

// ForeachFunc is a terminal side effect, run for every emitted value before the cycle commits
// (at-least-once: after a crash it may run again for the same value).
type ForeachFunc func(v any, c Context) error

type opKind string

const (
	kMap       opKind = "map"
	kFilter    opKind = "filter"
	kFlatMap   opKind = "flatMap"
	kKeyBy     opKind = "keyBy"
	kWindow    opKind = "window"
	kReduce    opKind = "reduce"
	kAggregate opKind = "aggregate"
	kGate      opKind = "gate"
	kSink      opKind = "sink"
	kForeach   opKind = "foreach"
)

type operator struct {
	kind    opKind
	mapFn   MapFunc
	filter  FilterFunc
	flat    FlatMapFunc
	keyFn   KeyFunc
	win     *window
	red     *reducer
	gate    GateFunc
	sink    *sink
	foreach ForeachFunc
}

// Stream is an operator chain over a source queue, built with [From] and the chain methods, and
// started with [Stream.Run] or [Stream.Start]. Building never fails: mistakes in the chain (a sink
// that is not last, a reduce without a window, …) are reported by Run.
type Stream struct {
	source string
	ops    []operator
}

// From starts a chain reading the queue named source.
func From(source string) *Stream { return &Stream{source: source} }

func (s *Stream) with(o operator) *Stream {
	ops := make([]operator, len(s.ops), len(s.ops)+1)
	copy(ops, s.ops)
	return &Stream{source: s.source, ops: append(ops, o)}
}

// Map transforms every value.
func (s *Stream) Map(fn MapFunc) *Stream { return s.with(operator{kind: kMap, mapFn: fn}) }

// Filter keeps the values fn accepts.
func (s *Stream) Filter(fn FilterFunc) *Stream { return s.with(operator{kind: kFilter, filter: fn}) }

// FlatMap replaces every value by the values fn returns.
func (s *Stream) FlatMap(fn FlatMapFunc) *Stream {
	return s.with(operator{kind: kFlatMap, flat: fn})
}

// KeyBy sets the key windows, reducers and the gate group by (default: the source partition id).
// Keys other than the partition are still stored per source partition, so the same key seen on two
// partitions has two independent states.
func (s *Stream) KeyBy(fn KeyFunc) *Stream { return s.with(operator{kind: kKeyBy, keyFn: fn}) }

// Reduce folds the values of each window and key into an accumulator starting from a deep copy of
// initial; a window emits its accumulator when it closes.
func (s *Stream) Reduce(fn ReduceFunc, initial any) *Stream {
	return s.with(operator{kind: kReduce, red: &reducer{fn: fn, initial: initial, hasInitial: initial != nil}})
}

// Aggregate is a reducer built from named fields. The name chooses the aggregation: "count" adds
// the number the extractor returns (1 when it returns no number or is nil), "sum", "min", "max"
// fold numbers (others are ignored; min and max start as null), "avg" keeps a running mean with its
// hidden "__avg_sum" and "__avg_count"; any other name is a running numeric sum. fieldOrder fixes
// the field order the config hash sees (Go maps have none); without it the names are sorted.
func (s *Stream) Aggregate(fields map[string]Extractor, fieldOrder ...string) *Stream {
	order := fieldOrder
	if len(order) == 0 {
		for k := range fields {
			order = append(order, k)
		}
		sort.Strings(order)
	}
	return s.with(operator{kind: kAggregate, red: &reducer{fields: order, extract: fields, aggregate: true}})
}

// Gate admits values in order while fn allows them; see [GateFunc].
func (s *Stream) Gate(fn GateFunc) *Stream { return s.with(operator{kind: kGate, gate: fn}) }

// SinkOption chooses the sink partition of [Stream.To].
type SinkOption func(*sink)

// SinkPartition sends every value to one named partition.
func SinkPartition(name string) SinkOption { return func(k *sink) { k.fixed = name } }

// SinkPartitionFunc names the sink partition of each value.
func SinkPartitionFunc(fn func(v any) string) SinkOption { return func(k *sink) { k.resolve = fn } }

// To pushes every emitted value to queue, in the same transaction that acknowledges its source. The
// partition is the resolver's answer, the fixed name, or else the source partition's name. A value
// that is not a JSON object is wrapped as {"value": v}.
func (s *Stream) To(queue string, opts ...SinkOption) *Stream {
	k := &sink{queue: queue}
	for _, o := range opts {
		o(k)
	}
	return s.with(operator{kind: kSink, sink: k})
}

// Foreach runs fn for every emitted value before the cycle commits.
func (s *Stream) Foreach(fn ForeachFunc) *Stream {
	return s.with(operator{kind: kForeach, foreach: fn})
}

type sink struct {
	queue   string
	fixed   string
	resolve func(v any) string
}

// plan is a compiled chain: stateless operators before and after the stateful stage.
type plan struct {
	pre, post []operator
	win       *window
	red       *reducer
	gate      GateFunc
	sink      *sink
	foreach   ForeachFunc
	keyed     bool
}

// compile checks the chain's shape (the same rules as the JavaScript and Python runtimes).
func (s *Stream) compile() (*plan, error) {
	if s.source == "" {
		return nil, errors.New("streams: From needs a source queue")
	}
	p := &plan{}
	stateful := false // a reducer or gate was seen: later stateless operators are post
	for i, o := range s.ops {
		if p.sink != nil || p.foreach != nil {
			return nil, fmt.Errorf("streams: %s after the terminal To/Foreach: the sink must be last", o.kind)
		}
		switch o.kind {
		case kMap, kFilter, kFlatMap:
			if stateful {
				p.post = append(p.post, o)
			} else {
				p.pre = append(p.pre, o)
			}
		case kKeyBy:
			switch {
			case p.keyed:
				return nil, errors.New("streams: at most one KeyBy")
			case stateful:
				return nil, errors.New("streams: KeyBy must come before Reduce/Aggregate/Gate")
			case p.win != nil:
				return nil, errors.New("streams: KeyBy must come before the window")
			}
			p.keyed = true
			p.pre = append(p.pre, o)
		case kWindow:
			switch {
			case p.win != nil:
				return nil, errors.New("streams: at most one window")
			case p.red != nil:
				return nil, errors.New("streams: a window cannot follow Reduce/Aggregate")
			case p.gate != nil:
				return nil, errors.New("streams: Gate cannot be combined with a window")
			}
			if err := o.win.validate(); err != nil {
				return nil, err
			}
			p.win = o.win
		case kReduce, kAggregate:
			switch {
			case p.red != nil:
				return nil, errors.New("streams: at most one Reduce/Aggregate")
			case p.win == nil:
				return nil, fmt.Errorf("streams: %s needs a window before it", o.kind)
			case o.kind == kReduce && o.red.fn == nil:
				return nil, errors.New("streams: Reduce needs a function")
			}
			if o.kind == kAggregate {
				for _, f := range o.red.fields {
					if _, ok := o.red.extract[f]; !ok {
						return nil, fmt.Errorf("streams: Aggregate field order names %q, which has no extractor", f)
					}
				}
				if len(o.red.fields) != len(o.red.extract) {
					return nil, errors.New("streams: Aggregate field order must name every field once")
				}
			}
			p.red = o.red
			stateful = true
		case kGate:
			switch {
			case p.gate != nil:
				return nil, errors.New("streams: at most one Gate")
			case p.win != nil || p.red != nil:
				return nil, errors.New("streams: Gate cannot be combined with a window or a reducer")
			case o.gate == nil:
				return nil, errors.New("streams: Gate needs a function")
			}
			p.gate = o.gate
			stateful = true
		case kSink:
			if strings.TrimSpace(o.sink.queue) == "" {
				return nil, errors.New("streams: To needs a queue name")
			}
			p.sink = o.sink
		case kForeach:
			p.foreach = o.foreach
		default:
			return nil, fmt.Errorf("streams: operator %d has unknown kind %q", i, o.kind)
		}
	}
	if p.win != nil && p.red == nil {
		return nil, fmt.Errorf("streams: window-%s needs a Reduce or Aggregate after it", p.win.kind)
	}
	return p, nil
}
