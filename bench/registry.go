package main

import (
	"context"
	"fmt"
	"strings"
)

// A scenario runs against one target and returns one result per measured configuration (a sweep returns
// several). Scenarios register themselves, so adding one is a new file with an init function:
//
//	func init() { registerScenario("streams", "what it measures", runStreams) }
//
// The default -scenarios list is every registered scenario in registration order.
type scenario struct {
	name     string
	about    string
	optional bool // not part of -scenarios all; run it by name
	run      func(ctx context.Context, r *runner) ([]*Result, error)
}

var registry []scenario

func registerScenario(name, about string, run func(ctx context.Context, r *runner) ([]*Result, error)) {
	for _, s := range registry {
		if s.name == name {
			panic("bench: scenario registered twice: " + name)
		}
	}
	registry = append(registry, scenario{name: name, about: about, run: run})
}

// registerOptionalScenario registers a scenario that runs only when named in -scenarios.
func registerOptionalScenario(name, about string, run func(ctx context.Context, r *runner) ([]*Result, error)) {
	registerScenario(name, about, run)
	registry[len(registry)-1].optional = true
}

// scenarioNames lists the registered scenarios; with defaults only those of -scenarios all.
func scenarioNames(defaults bool) []string {
	var names []string
	for _, s := range registry {
		if !defaults || !s.optional {
			names = append(names, s.name)
		}
	}
	return names
}

// lookupScenario finds a registered scenario; "push-bN" is the push scenario at one batch size.
func lookupScenario(name string) (scenario, error) {
	for _, s := range registry {
		if s.name == name {
			return s, nil
		}
	}
	if rest, ok := strings.CutPrefix(name, "push-b"); ok {
		var b int
		if _, err := fmt.Sscanf(rest, "%d", &b); err == nil && b > 0 && fmt.Sprint(b) == rest {
			return scenario{name: name, run: func(ctx context.Context, r *runner) ([]*Result, error) { return one(r.runPush(ctx, b)) }}, nil
		}
	}
	return scenario{}, fmt.Errorf("unknown scenario %q (have %s, push-bN)", name, strings.Join(scenarioNames(false), ", "))
}

// sweep runs a scenario once per value (a push batch size, a group or partition count) and returns the
// results so far, stopping at the first error.
func sweep(ctx context.Context, values []int, run func(context.Context, int) (*Result, error)) ([]*Result, error) {
	var out []*Result
	for _, v := range values {
		res, err := run(ctx, v)
		if res != nil {
			out = append(out, res)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// The built-in scenarios, registered before any init function of other files runs.
var _ = func() int {
	registerScenario("push", "push throughput at each -push-batches size, with the plain-INSERT baseline", func(ctx context.Context, r *runner) ([]*Result, error) {
		return sweep(ctx, r.opt.pushBatches, r.runPush)
	})
	registerScenario("pop-ack", "pop+ack throughput from a pre-filled queue", func(ctx context.Context, r *runner) ([]*Result, error) {
		return one(r.runPopAck(ctx))
	})
	registerScenario("fanout", "one queue consumed by each of -group-counts groups (a sweep)", func(ctx context.Context, r *runner) ([]*Result, error) {
		return sweep(ctx, r.opt.groupCounts, r.runFanout)
	})
	registerScenario("partitions", "wildcard pops over -partition-counts partitions (a sweep)", func(ctx context.Context, r *runner) ([]*Result, error) {
		return sweep(ctx, r.opt.partitionCounts, r.runPartitions)
	})
	registerOptionalScenario("streams", "the streams runtime (client/streams) working off a backlog: keyBy, tumbling window, aggregate, sink", func(ctx context.Context, r *runner) ([]*Result, error) {
		return one(r.runStreams(ctx))
	})
	registerScenario("pipeline", "pop, then one transaction acking the inputs and pushing them on", func(ctx context.Context, r *runner) ([]*Result, error) {
		return one(r.runPipeline(ctx))
	})
	return 0
}()
