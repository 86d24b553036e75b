package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

var hotStatements = []string{"Pop", "PartitionBump", "ConsumerLock", "AckResolve", "AckApply", "PendingForgetConsumed", "AckCompletions", "AckLeases"}

// TestHotPathPlans: the generic plans of the pop, push and ack statements, built with the settings they
// run with (pop and ack statements on a connection of the hot pool, with its session settings; the push's
// under HotPathSettings on the general pool; a connection keeps that plan while the tables grow, until
// the next ANALYZE), read every table through
// an index, and walk each index from its leading column. Two moments are checked:
//   - right after the tables were analyzed empty: no sequential scan (one of messages in AckResolve's
//     plan cost 10-12 ms per ack in the fan-out benchmark once the queue had grown), and the ack's
//     lock, resolve and apply statements and the parts of a pop that run on every call (its line walk,
//     candidates, messages, claims and rotation) use only index conditions that start with the index's
//     first column (the autoAck cleanup and PendingForgetConsumed find their pending_partitions row by
//     a tie the planner may break either way on empty tables);
//   - analyzed with the few rows of a fresh database (a queue, some partitions, subscribed groups,
//     messages, a pop): no bitmap scan and no index walk on a later column anywhere. A walk of an index
//     on a later column reads the whole index: the rotation of Pop, planned that way, read
//     pending_partitions by consumer_group alone, every row of the group in every queue.
func TestHotPathPlans(t *testing.T) {
	t.Parallel()
	st, c := privateConn(t)
	h := hotConn(t, st)
	leading := leadingColumns(t, c)
	genericPlan := func(t *testing.T, name, sql string) string {
		if name == "PartitionBump" {
			return genericPlanOn(t, c, name, sql, true)
		}
		return genericPlanOn(t, h, name, sql, false)
	}
	// plans runs check on the generic plan of every hot statement; Pop's are those of each of its
	// variants, the texts Store.Pop runs.
	plans := func(t *testing.T, check func(name, sql, plan string)) {
		for _, name := range hotStatements {
			sqls := []string{store.Queries[name]}
			if name == "Pop" {
				sqls = store.PopVariants()
			}
			for _, sql := range sqls {
				check(name, sql, genericPlan(t, name, sql))
			}
		}
	}

	t.Run("empty", func(t *testing.T) {
		_, err := c.Exec(t.Context(), `ANALYZE`)
		require.NoError(t, err)
		plans(t, func(name, sql, plan string) {
			require.NotContains(t, plan, "Seq Scan", "%s's generic plan:\n%s", name, plan)
			switch name {
			case "ConsumerLock", "AckResolve", "AckApply", "PartitionBump", "AckCompletions", "AckLeases":
				require.Empty(t, laterColumnScans(plan, leading), "%s's generic plan:\n%s", name, plan)
			case "Pop":
				for _, cte := range []string{"line", "locked", "kept", "claimed_head", "claimed_rest", "turn"} {
					if !strings.Contains(sql, cte+" AS (") {
						continue // a part of the pops that claim several partitions
					}
					section := planSection(plan, cte)
					require.NotEmpty(t, section, "%s's CTE %s:\n%s", name, cte, plan)
					require.Empty(t, laterColumnScans(section, leading), "%s's CTE %s:\n%s", name, cte, plan)
				}
			}
		})
	})
	t.Run("fresh", func(t *testing.T) {
		for i := range 3 {
			pid := partition(t, st, "fresh", fmt.Sprintf("p%d", i))
			push(t, st, pid, uniq("a"), uniq("b"))
		}
		for _, g := range []string{"g1", "g2"} {
			_, err := st.Groups().EnsureSubscription(t.Context(), "fresh", g, store.SubscribeAll, time.Time{})
			require.NoError(t, err)
		}
		pop(t, st, "fresh", store.QueueMode, "", 10)
		pop(t, st, "fresh", "g1", "", 10)
		_, err := c.Exec(t.Context(), `ANALYZE`)
		require.NoError(t, err)
		plans(t, func(name, _, plan string) {
			require.NotContains(t, plan, "Seq Scan", "%s's generic plan:\n%s", name, plan)
			require.NotContains(t, plan, "Bitmap", "%s's generic plan:\n%s", name, plan)
			require.Empty(t, laterColumnScans(plan, leading), "%s's generic plan:\n%s", name, plan)
		})
	})
}

// hotConn holds a connection of the store's hot pool for the whole test: the session settings that pops
// and acks run with.
func hotConn(t *testing.T, st *store.Store) *pgx.Conn {
	t.Helper()
	conn, err := store.HotPoolOf(st).Acquire(t.Context())
	require.NoError(t, err)
	t.Cleanup(conn.Release)
	return conn.Conn()
}

// genericPlanOn prepares sql, the text of named query name (or of a variant of it), on c and returns
// EXPLAIN of its plan (see explainRolledBack for settings).
func genericPlanOn(t *testing.T, c *pgx.Conn, name, sql string, settings bool) string {
	t.Helper()
	ctx := t.Context()
	sd, err := c.Prepare(ctx, name, sql)
	require.NoError(t, err, name)
	defer func() { _ = c.Deallocate(context.WithoutCancel(ctx), name) }()
	args := make([]string, len(sd.ParamOIDs))
	for i := range args {
		args[i] = "NULL"
	}
	return explainRolledBack(t, c, settings, name, "COSTS OFF", strings.Join(args, ","))
}

// analyzed runs a statement through run (an EXPLAIN with the options given, such as explainRolledBack)
// and returns the top node of its executed plan, with the plan's text for failure messages.
func analyzed(t *testing.T, run func(opts string) string) (planNode, string) {
	t.Helper()
	var doc []struct{ Plan planNode }
	require.NoError(t, json.Unmarshal([]byte(run("FORMAT JSON, ANALYZE")), &doc))
	return doc[0].Plan, run("COSTS OFF")
}

// explainRolledBack is explainExecute in a transaction of its own on c, rolled back, so that an
// EXPLAIN ANALYZE changes nothing: under HotPathSettings with settings (as pushes run); without, c must
// be a hot connection for the settings pops and acks run with.
func explainRolledBack(t *testing.T, c *pgx.Conn, settings bool, name, opts, args string) string {
	t.Helper()
	ctx := t.Context()
	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if settings {
		_, err = tx.Exec(ctx, store.Queries["HotPathSettings"], true)
		require.NoError(t, err)
	}
	return explainExecute(t, tx, name, opts, args)
}

// leadingColumns maps every index of the broker's tables to its first column.
func leadingColumns(t *testing.T, c *pgx.Conn) map[string]string {
	t.Helper()
	leading := map[string]string{}
	rows, err := c.Query(t.Context(), `SELECT i.indexrelid::regclass::text, a.attname
		FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		WHERE i.indrelid::regclass::text NOT LIKE 'pg_%'`)
	require.NoError(t, err)
	for rows.Next() {
		var idx, col string
		require.NoError(t, rows.Scan(&idx, &col))
		leading[idx] = col
	}
	require.NoError(t, rows.Err())
	return leading
}

// explainExecute is explainText of EXPLAIN (opts) of the prepared statement name run with args (SQL
// text).
func explainExecute(t *testing.T, tx pgx.Tx, name, opts, args string) string {
	t.Helper()
	return explainText(t, tx, `EXPLAIN (`+opts+`) EXECUTE "`+name+`"(`+args+`)`, name)
}

// explainText runs an EXPLAIN of statement name and returns its lines as one text.
func explainText(t *testing.T, tx pgx.Tx, explain, name string) string {
	t.Helper()
	rows, err := tx.Query(t.Context(), explain)
	require.NoError(t, err, name)
	var plan strings.Builder
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		plan.WriteString(line + "\n")
	}
	require.NoError(t, rows.Err(), name)
	return plan.String()
}

// planSection returns the lines of CTE name in an EXPLAIN text (up to the next line as indented).
func planSection(plan, name string) string {
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "CTE "+name {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		end := i + 1
		for end < len(lines) && len(lines[end])-len(strings.TrimLeft(lines[end], " ")) > indent {
			end++
		}
		return strings.Join(lines[i:end], "\n")
	}
	return ""
}

var scanRE = regexp.MustCompile(`(?:Index Scan|Index Only Scan|Bitmap Index Scan) (?:Backward )?(?:using|on) (\S+)`)

// laterColumnScans lists the index scans of a plan whose first Index Cond is not on the index's leading
// column (or that have no Index Cond at all): walks of the whole index.
func laterColumnScans(plan string, leading map[string]string) []string {
	var bad []string
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		m := scanRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		col, ok := leading[m[1]]
		if !ok {
			continue
		}
		cond := ""
		if i+1 < len(lines) {
			cond = strings.TrimSpace(lines[i+1])
		}
		// A row comparison led by the column bounds the walk as well as a condition on the column alone.
		if !strings.HasPrefix(cond, "Index Cond: (("+col+" ") && !strings.HasPrefix(cond, "Index Cond: ("+col+" ") &&
			!strings.HasPrefix(cond, "Index Cond: ((ROW("+col+", ") {
			bad = append(bad, strings.TrimSpace(l)+" / "+cond)
		}
	}
	return bad
}
