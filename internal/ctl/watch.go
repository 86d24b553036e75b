package ctl

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

// watchFlags add --watch to a listing: it is printed again every --interval until interrupted (or
// --watch-count refreshes), each refresh preceded by a timestamp line on stderr.
type watchFlags struct {
	on       bool
	interval time.Duration
	count    int
}

func (w *watchFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&w.on, "watch", "w", false, "print again every --interval until interrupted")
	cmd.Flags().DurationVar(&w.interval, "interval", 2*time.Second, "refresh period of --watch")
	cmd.Flags().IntVar(&w.count, "watch-count", 0, "with --watch: stop after this many refreshes (0 = until interrupted)")
}

func (a *app) watch(ctx context.Context, w watchFlags, once func(context.Context) error) error {
	if !w.on {
		return once(ctx)
	}
	if w.interval <= 0 {
		return usageErr("--interval must be positive")
	}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for n := 1; ; n++ {
		if n > 1 {
			fmt.Fprintln(a.env.Stdout)
		}
		a.info("# %s", time.Now().UTC().Format(time.RFC3339))
		if err := once(ctx); err != nil {
			return err
		}
		if w.count > 0 && n >= w.count {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// fetch is the broker call of a command: what it returns is printed through the command's view.
type fetch func(ctx context.Context, c *client.Client) (any, error)

// show is the body of a command that reads or changes one thing on the broker: connect, call,
// print the answer through v (its columns and names; the data is the answer).
func (a *app) show(ctx context.Context, v view, call fetch) error {
	return a.showWatched(ctx, watchFlags{}, v, call)
}

// showWatched is show under --watch: one connection, the call and the print repeated every
// --interval.
func (a *app) showWatched(ctx context.Context, w watchFlags, v view, call fetch) error {
	c, err := a.conn()
	if err != nil {
		return err
	}
	return a.watch(ctx, w, func(ctx context.Context) error {
		data, err := call(ctx, c)
		if err != nil {
			return err
		}
		v.data = data
		return a.print(v)
	})
}
