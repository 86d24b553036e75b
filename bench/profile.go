package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// profileCapture is a CPU profile of the broker being taken over one measured window.
type profileCapture struct {
	done chan struct{}
	path string
	err  error
	out  io.Writer
}

// startProfile asks the broker's pprof listener for a CPU profile as long as the window (rounded up to
// whole seconds); nil without -pprof or without a listener.
func (r *runner) startProfile(ctx context.Context, scenario string) *profileCapture {
	if r.opt.pprofDir == "" || r.pprofURL == "" {
		return nil
	}
	secs := int((r.opt.duration + time.Second - 1) / time.Second)
	p := &profileCapture{done: make(chan struct{}), out: r.out,
		path: filepath.Join(r.opt.pprofDir, fmt.Sprintf("%s-%s-%s.pprof", r.label, scenario, time.Now().UTC().Format("150405")))}
	go func() {
		defer close(p.done)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.pprofURL+"/debug/pprof/profile?seconds="+strconv.Itoa(secs), nil)
		if err != nil {
			p.err = err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			p.err = err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			p.err = fmt.Errorf("pprof: HTTP %d", resp.StatusCode)
			return
		}
		f, err := os.Create(p.path)
		if err != nil {
			p.err = err
			return
		}
		if _, err := io.Copy(f, resp.Body); err != nil {
			p.err = err
		}
		if err := f.Close(); err != nil && p.err == nil {
			p.err = err
		}
	}()
	return p
}

// wait returns the profile's path once written and prints its top functions; "" when there is none.
// The profile may end a little after the window (whole seconds).
func (p *profileCapture) wait() string {
	if p == nil {
		return ""
	}
	<-p.done
	if p.err != nil {
		fmt.Fprintf(p.out, "cpu profile failed: %v\n", p.err)
		return ""
	}
	fmt.Fprintf(p.out, "cpu profile: %s\n", p.path)
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=25", p.path).Output()
	if err == nil {
		lines := strings.Split(string(out), "\n")
		for _, l := range lines {
			if l != "" && !strings.HasPrefix(l, "File:") && !strings.HasPrefix(l, "Build ID:") && !strings.HasPrefix(l, "Type:") && !strings.HasPrefix(l, "Time:") {
				fmt.Fprintf(p.out, "  %s\n", l)
			}
		}
	}
	return p.path
}
