package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

func (a *app) maintenanceCmd() *cobra.Command {
	var pop bool
	cmd := &cobra.Command{
		Use:     "maintenance",
		Aliases: []string{"maint"},
		Short:   "Show or switch push maintenance (pushes spooled to disk) or, with --pop, pop maintenance",
		Example: `  queenctl maintenance get
  queenctl maintenance on --yes
  queenctl maintenance off
  queenctl maintenance on --pop --yes`,
	}
	cmd.PersistentFlags().BoolVar(&pop, "pop", false, "the pop maintenance flag (every pop answers empty) instead of push")
	cols := []column{{"PUSH-MAINTENANCE", "maintenanceMode", false}, {"POP-MAINTENANCE", "popMaintenanceMode", false},
		{"BUFFERED", "bufferedMessages", false}, {"BUFFER-HEALTHY", "bufferHealthy", true}}
	// A switch's answer carries the flag it switched only.
	setCols := []column{{"PUSH-MAINTENANCE", "maintenanceMode", false}, {"BUFFERED", "bufferedMessages", false},
		{"BUFFER-HEALTHY", "bufferHealthy", true}, {"MESSAGE", "message", true}}
	popCols := []column{{"POP-MAINTENANCE", "popMaintenanceMode", false}}
	get := &cobra.Command{
		Use:     "get",
		Aliases: []string{"status"},
		Short:   "Show the maintenance flags",
		Example: "  queenctl maintenance get -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pop {
				return a.show(cmd.Context(), view{columns: popCols}, func(ctx context.Context, c *client.Client) (any, error) {
					return c.PopMaintenance(ctx)
				})
			}
			return a.show(cmd.Context(), view{columns: cols}, func(ctx context.Context, c *client.Client) (any, error) {
				return c.Maintenance(ctx)
			})
		},
	}
	set := func(on bool) *cobra.Command {
		var yes bool
		use, short := "off", "Switch maintenance off on every broker"
		if on {
			use, short = "on", "Switch maintenance on on every broker (needs --yes)"
		}
		c := &cobra.Command{
			Use:     use,
			Short:   short,
			Example: "  queenctl maintenance " + use + map[bool]string{true: " --yes", false: ""}[on] + "\n  queenctl maintenance " + use + " --pop" + map[bool]string{true: " --yes", false: ""}[on],
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if on {
					what := "switch push maintenance on"
					if pop {
						what = "switch pop maintenance on"
					}
					if err := a.confirm(yes, what); err != nil {
						return err
					}
				}
				if pop {
					return a.show(cmd.Context(), view{columns: popCols}, func(ctx context.Context, c *client.Client) (any, error) {
						return c.SetPopMaintenance(ctx, on)
					})
				}
				return a.show(cmd.Context(), view{columns: setCols}, func(ctx context.Context, c *client.Client) (any, error) {
					return c.SetMaintenance(ctx, on)
				})
			},
		}
		if on {
			c.Flags().BoolVarP(&yes, "yes", "y", false, "confirm")
		}
		return c
	}
	cmd.AddCommand(get, set(true), set(false))
	return cmd
}

func (a *app) healthCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "health",
		Aliases: []string{"ping"},
		Short:   "Check the broker and its database (exit 2 unless healthy)",
		Example: "  queenctl health\n  queenctl ping -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.conn()
			if err != nil {
				return err
			}
			start := time.Now()
			raw, err := c.Health(cmd.Context())
			if err != nil {
				return err
			}
			var h map[string]any
			if err := json.Unmarshal(raw, &h); err != nil {
				return err
			}
			h["latencyMs"] = time.Since(start).Milliseconds()
			if err := a.print(view{data: h, columns: []column{{"STATUS", "status", false}, {"DATABASE", "database", false},
				{"VERSION", "version", false}, {"LATENCY-MS", "latencyMs", false}}}); err != nil {
				return err
			}
			if h["status"] != "healthy" || h["database"] != "connected" {
				return &exitError{code: ExitServer, err: fmt.Errorf("broker is %v, database %v", h["status"], h["database"])}
			}
			return nil
		},
	}
}

func (a *app) metricsCmd() *cobra.Command {
	var prom bool
	cmd := &cobra.Command{
		Use:     "metrics",
		Short:   "Print the broker's metrics (JSON, or the Prometheus text with --prometheus)",
		Example: "  queenctl metrics -o yaml\n  queenctl metrics --prometheus | grep queen_",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.conn()
			if err != nil {
				return err
			}
			if prom {
				b, err := c.GetText(cmd.Context(), "/metrics/prometheus", nil)
				if err != nil {
					return err
				}
				_, err = a.env.Stdout.Write(b)
				return err
			}
			raw, err := c.GetRaw(cmd.Context(), "/metrics", nil)
			if err != nil {
				return err
			}
			return a.print(view{data: raw})
		},
	}
	cmd.Flags().BoolVar(&prom, "prometheus", false, "the Prometheus exposition (raw text)")
	return cmd
}

func (a *app) versionCmd() *cobra.Command {
	var short bool
	return func() *cobra.Command {
		cmd := &cobra.Command{
			Use:     "version",
			Short:   "Print queenctl's version and the broker's (unless --short)",
			Example: "  queenctl version\n  queenctl version --short",
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				out := map[string]any{"client": versionString()}
				if !short {
					c, err := a.conn()
					if err != nil {
						return err
					}
					raw, err := c.Health(cmd.Context())
					if err != nil {
						return err
					}
					out["server"] = jsonField(raw, "version")
					out["serverURL"] = c.Config().URLs[0]
				}
				if short && a.g.output == "" {
					fmt.Fprintln(a.env.Stdout, versionString())
					return nil
				}
				return a.print(view{data: out, columns: []column{{"CLIENT", "client", false}, {"SERVER", "server", false}, {"URL", "serverURL", true}}})
			},
		}
		cmd.Flags().BoolVar(&short, "short", false, "only queenctl's version, without asking the server")
		return cmd
	}()
}
