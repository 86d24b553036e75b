package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// profileCapture is a CPU profile of the broker being taken over one measured window, and of this
// load generator over the same window (its CPU comes out of the same two cores).
type profileCapture struct {
	done    chan struct{}
	path    string
	err     error
	out     io.Writer
	harness *os.File // the harness's profile being written; nil when it could not start
}

// startProfile asks the broker's pprof listener for a CPU profile as long as the window (rounded up to
// whole seconds) and profiles the harness itself; nil without -pprof.
func (r *runner) startProfile(ctx context.Context, scenario string) *profileCapture {
	if r.opt.pprofDir == "" {
		return nil
	}
	secs := int((r.opt.duration + time.Second - 1) / time.Second)
	p := &profileCapture{done: make(chan struct{}), out: r.out,
		path: filepath.Join(r.opt.pprofDir, fmt.Sprintf("%s-%s-%s.pprof", r.label, scenario, time.Now().UTC().Format("150405")))}
	p.startHarness(strings.TrimSuffix(p.path, ".pprof") + "-harness.pprof")
	go func() {
		defer close(p.done)
		if r.pprofURL == "" {
			p.err = errors.New("the broker has no pprof listener (not started by the bench)")
			return
		}
		// The allocations over the same window (a delta profile): what the collector has to keep up with.
		allocs := make(chan error, 1)
		go func() {
			allocs <- fetchProfile(ctx, r.pprofURL+"/debug/pprof/allocs?seconds="+strconv.Itoa(secs), p.allocsPath())
		}()
		p.err = fetchProfile(ctx, r.pprofURL+"/debug/pprof/profile?seconds="+strconv.Itoa(secs), p.path)
		if err := <-allocs; err != nil {
			fmt.Fprintf(p.out, "allocation profile failed: %v\n", err)
		}
	}()
	return p
}

func (p *profileCapture) allocsPath() string {
	return strings.TrimSuffix(p.path, ".pprof") + "-allocs.pprof"
}

// fetchProfile writes the profile a pprof URL answers to path.
func fetchProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: HTTP %d", resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// startHarness profiles this process until the window ends (best effort: a failure is printed).
func (p *profileCapture) startHarness(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(p.out, "harness cpu profile: %v\n", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(p.out, "harness cpu profile: %v\n", err)
		f.Close()
		return
	}
	p.harness = f
}

// wait returns the broker profile's path once written and prints its top functions, then those of the
// harness; "" when there is none. The broker's profile may end a little after the window (whole
// seconds); the harness's ends when wait is called.
func (p *profileCapture) wait() string {
	if p == nil {
		return ""
	}
	if p.harness != nil {
		pprof.StopCPUProfile()
		if err := p.harness.Close(); err != nil {
			fmt.Fprintf(p.out, "harness cpu profile: %v\n", err)
		}
	}
	<-p.done
	if p.harness != nil {
		fmt.Fprintf(p.out, "harness cpu profile: %s\n", p.harness.Name())
		printTop(p.out, p.harness.Name(), 15)
	}
	if p.err != nil {
		fmt.Fprintf(p.out, "cpu profile failed: %v\n", p.err)
		return ""
	}
	fmt.Fprintf(p.out, "cpu profile: %s\n", p.path)
	printTop(p.out, p.path, 25)
	if _, err := os.Stat(p.allocsPath()); err == nil {
		fmt.Fprintf(p.out, "allocation profile (bytes allocated in the window): %s\n", p.allocsPath())
		printTop(p.out, p.allocsPath(), 15, "-sample_index=alloc_space")
	}
	return p.path
}

// printTop prints the n functions of a profile with the most samples of their own.
func printTop(w io.Writer, path string, n int, flags ...string) {
	args := append([]string{"tool", "pprof", "-top", "-nodecount=" + strconv.Itoa(n)}, flags...)
	out, err := exec.Command("go", append(args, path)...).Output()
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "File:") && !strings.HasPrefix(l, "Build ID:") && !strings.HasPrefix(l, "Type:") && !strings.HasPrefix(l, "Time:") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}
