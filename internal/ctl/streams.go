package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

// The streams routes (/streams/v1/*, spec streams.md §3) are called through client.Do: the typed
// streams SDK lives in its own package and the operator only needs the raw answers.

func (a *app) streamsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "streams",
		Aliases: []string{"stream"},
		Short:   "Register stream queries, read their state, commit a cycle by hand",
		Example: `  queenctl streams register --name revenue --source orders --sink revenue-out --config-hash 9f2c…
  queenctl streams state 0190…(query id) 3f2e…(partition id) --prefix 'tumb:60'
  queenctl streams cycle -f cycle.json`,
	}
	var name, source, sink, hash string
	var reset bool
	reg := &cobra.Command{
		Use:   "register",
		Short: "Register (or re-register) a stream query; prints its query_id",
		Long: `POST /streams/v1/queries. A new name is inserted; the same name and hash keeps the state; a different
hash is refused with 409 (exit 1) unless --reset, which wipes the query's state.`,
		Example: "  queenctl streams register --name revenue --source orders --config-hash 9f2c… -o jsonpath='{.query_id}'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" || source == "" || hash == "" {
				return usageErr("--name, --source and --config-hash are required")
			}
			body := map[string]any{"name": name, "source_queue": source, "sink_queue": sink, "config_hash": hash, "reset": reset}
			return a.show(cmd.Context(), view{columns: []column{{"QUERY-ID", "query_id", false}, {"NAME", "name", false},
				{"FRESH", "fresh", false}, {"RESET", "reset", false}}, name: func(r map[string]any) string { return str(r["query_id"]) }},
				func(ctx context.Context, c *client.Client) (any, error) {
					return c.Do(ctx, http.MethodPost, "/streams/v1/queries", nil, body)
				})
		},
	}
	rf := reg.Flags()
	rf.StringVar(&name, "name", "", "query name (the queryId of the SDKs)")
	rf.StringVar(&source, "source", "", "source queue")
	rf.StringVar(&sink, "sink", "", "sink queue (optional)")
	rf.StringVar(&hash, "config-hash", "", "fingerprint of the operator chain")
	rf.BoolVar(&reset, "reset", false, "wipe the state when the hash changed")

	var keys []string
	var prefix string
	var ripe int64
	state := &cobra.Command{
		Use:     "state QUERY_ID PARTITION_ID",
		Short:   "Read a stream query's state rows for one source partition",
		Example: "  queenctl streams state 0190… 3f2e… --key __wm__\n  queenctl streams state 0190… 3f2e… --prefix 'tumb:60' -o json",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{"query_id": args[0], "partition_id": args[1]}
			if len(keys) > 0 {
				body["keys"] = keys
			}
			if prefix != "" {
				body["key_prefix"] = prefix
			}
			if cmd.Flags().Changed("ripe-before") {
				body["ripe_at_or_before"] = ripe
			}
			return a.show(cmd.Context(), view{items: "rows", columns: []column{{"KEY", "key", false}, {"VALUE", "value", false},
				{"UPDATED", "updated_at", false}}, name: func(r map[string]any) string { return str(r["key"]) }},
				func(ctx context.Context, c *client.Client) (any, error) {
					return c.Do(ctx, http.MethodPost, "/streams/v1/state/get", nil, body)
				})
		},
	}
	state.Flags().StringArrayVar(&keys, "key", nil, "exact key (repeatable)")
	state.Flags().StringVar(&prefix, "prefix", "", "key prefix")
	state.Flags().Int64Var(&ripe, "ripe-before", 0, "only window rows whose windowEnd (epoch ms) is at or before this")

	var file string
	cycle := &cobra.Command{
		Use:   "cycle -f FILE",
		Short: "Commit a cycle (state ops, sink pushes, source ack) from a JSON file",
		Long: `POST /streams/v1/cycle with the file's body {query_id, partition_id, consumer_group, state_ops,
push_items, ack, release_lease}. A cycle the broker rolled back (success:false) exits 2.`,
		Example: "  queenctl streams cycle -f cycle.json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErr("cycle needs -f FILE (or -f -)")
			}
			b, err := a.readInput(file)
			if err != nil {
				return err
			}
			var body map[string]any
			if err := json.Unmarshal(b, &body); err != nil {
				return usageErr("%s: %v", file, err)
			}
			c, err := a.conn()
			if err != nil {
				return err
			}
			raw, err := c.Do(cmd.Context(), http.MethodPost, "/streams/v1/cycle", nil, body)
			if err != nil {
				return err
			}
			if err := a.print(view{data: raw, columns: []column{{"SUCCESS", "success", false}, {"STATE-OPS", "state_ops_applied", false},
				{"ERROR", "error", false}}}); err != nil {
				return err
			}
			if jsonField(raw, "success") != "true" {
				return &exitError{code: ExitServer, err: fmt.Errorf("cycle rolled back: %s", jsonField(raw, "error"))}
			}
			return nil
		},
	}
	cycle.Flags().StringVarP(&file, "file", "f", "", "cycle body, or - for stdin")
	cmd.AddCommand(reg, state, cycle)
	return cmd
}
