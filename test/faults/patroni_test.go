package faults

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPatroniFailoverLosesNothing runs the HA load (four producers, queue mode and one consumer group,
// pops acked in batches) against one broker pointed at both nodes of a Patroni cluster with
// synchronous_mode, through a multi-host DATABASE_URL with target_session_attrs=read-write. Two faults
// follow each other: `patronictl failover` to the synchronous standby, then, once the old leader is
// back as the synchronous standby, a SIGKILL of the new leader's postmaster. After each, pushes and
// pops resume on the new leader with the same broker process; at the end every push answered 201 has
// been delivered to every group exactly once, in push order per partition. The gap of each fault (the
// longest time without a push answered 201, or without a pop delivering) is logged.
func TestPatroniFailoverLosesNothing(t *testing.T) {
	t.Parallel() // waits on failovers and a child go test: overlaps the other slow tests
	begin := time.Now()
	pc := startPatroni(t)
	leader, standby := pc.waitHealthy(t, time.Minute)
	t.Logf("Patroni cluster up in %s: %s", time.Since(begin).Round(time.Millisecond), pc.roles())

	b := startProc(t, map[string]string{"DATABASE_URL": pc.databaseURL("postgres"), "FILE_BUFFER_DIR": t.TempDir()})
	require.EventuallyWithT(t, func(c *assert.CollectT) { healthy(c, b.base) },
		60*time.Second, 20*time.Millisecond, "the broker never reached the leader")
	l := startHALoad(t, b.base, haLoadOptions{Producers: 4, Groups: []string{"", "audit"}})
	waitLoadResumes(t, l, "no load before the faults")

	// (a) A manual failover to the synchronous standby, as an operator does for maintenance.
	start := time.Now()
	out, err := pc.patronictl(t.Context(), "failover", "--candidate", standby.name, "--force")
	require.NoError(t, err, out)
	waitLeader(t, pc, standby.name)
	promoted := time.Since(start)
	waitLoadResumes(t, l, "the load never resumed after patronictl failover")
	pushGap, popGap := l.gapIn(start, time.Now())
	t.Logf("patronictl failover %s -> %s: new leader after %s; gap: push %s, pop %s", leader.name, standby.name,
		promoted.Round(time.Millisecond), pushGap.Round(time.Millisecond), popGap.Round(time.Millisecond))
	require.Nil(t, b.cmd.ProcessState, "the broker exited: %s", b.out)

	// (b) The leader's postmaster dies. primary_start_timeout 0 makes Patroni fail over instead of
	// restarting it in place, which it can do without loss only with a synchronous standby to promote.
	leader, standby = pc.waitHealthy(t, 180*time.Second)
	start = time.Now()
	leader.killPostmaster(t)
	waitLeader(t, pc, standby.name)
	promoted = time.Since(start)
	waitLoadResumes(t, l, "the load never resumed after the leader's postmaster was killed")
	pushGap, popGap = l.gapIn(start, time.Now())
	t.Logf("kill -9 of %s's postmaster -> %s: new leader after %s; gap: push %s, pop %s", leader.name, standby.name,
		promoted.Round(time.Millisecond), pushGap.Round(time.Millisecond), popGap.Round(time.Millisecond))
	require.Nil(t, b.cmd.ProcessState, "the broker exited: %s", b.out)

	l.Stop()
	// A push answered 5xx promises nothing and is retried by its client, but it should have been spooled:
	// the broker's line for each such request names the cause.
	for line := range strings.SplitSeq(b.out.String(), "\n") {
		if strings.Contains(line, "request failed") {
			t.Logf("broker: %s", line)
		}
	}
	l.Verify(t).requireExactlyOnce(t)
	t.Logf("total %s", time.Since(begin).Round(time.Millisecond))
}

// The waits are generous: on a loaded machine (the whole suite runs in parallel) a failover that takes
// 3 s on an idle machine was seen to take 50 s.

// waitLeader waits until Patroni reports name as the running leader.
func waitLeader(t *testing.T, pc *patroniCluster, name string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		ms, _ := pc.members()
		assert.True(c, slices.ContainsFunc(ms, func(m clusterMember) bool {
			return m.Name == name && m.Role == "leader" && (m.State == "running" || m.State == "streaming")
		}), "%s never became the leader: %s", name, pc.roles())
	}, 180*time.Second, 50*time.Millisecond)
}

// waitLoadResumes waits until both pushes and pops have succeeded again: 20 more pushes answered 201
// and 3 more pops that delivered.
func waitLoadResumes(t *testing.T, l *haLoad, msg string) {
	t.Helper()
	pushed, popped := l.Answered(), l.Popped()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.GreaterOrEqual(c, l.Answered(), pushed+20, "pushes answered")
		assert.GreaterOrEqual(c, l.Popped(), popped+3, "pops delivered")
	}, 180*time.Second, 20*time.Millisecond, msg)
}

// gapIn is, within [from, to], the longest time without a push answered 201 and the longest without a
// pop delivering messages.
func (l *haLoad) gapIn(from, to time.Time) (push, pop time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	within := func(ts []time.Time) []time.Time {
		var out []time.Time
		for _, x := range ts {
			if !x.Before(from) && !x.After(to) {
				out = append(out, x)
			}
		}
		return out
	}
	return longestGap(within(l.pushOK), from, to), longestGap(within(l.popOK), from, to)
}
