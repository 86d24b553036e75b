// Command queenctl is the operator CLI of Queen; see internal/ctl and docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/queen-go/queen/internal/ctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	width := 0
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
		width = w
	}
	code := ctl.Main(ctx, os.Args[1:], ctl.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())), StdinTTY: term.IsTerminal(int(os.Stdin.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())), Width: width,
	})
	stop()
	os.Exit(code)
}
