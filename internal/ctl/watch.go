package ctl

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
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
