package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// rssSampler polls VmRSS of the broker processes and keeps the largest seen in any of them since the
// last reset.
type rssSampler struct {
	pids []int
	mu   sync.Mutex
	max  int64 // bytes
	last int64
}

func newRSSSampler(pids []int) *rssSampler { return &rssSampler{pids: pids} }

// run samples every interval until ctx ends. Without pids (remote broker) it samples nothing.
func (s *rssSampler) run(ctx context.Context, interval time.Duration) {
	if len(s.pids) == 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *rssSampler) sample() {
	var v int64
	for _, pid := range s.pids {
		if r, err := readVmRSS(pid); err == nil {
			v = max(v, r)
		}
	}
	s.mu.Lock()
	s.last = v
	s.max = max(s.max, v)
	s.mu.Unlock()
}

// reset starts a new maximum (at the current value) and returns the previous maximum.
func (s *rssSampler) reset() int64 {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.max
	s.max = s.last
	return m
}

// readVmRSS returns the resident set size of pid in bytes, from /proc/<pid>/status.
func readVmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) < 1 {
				break
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
