package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clkTck is USER_HZ, the unit of utime/stime in /proc/<pid>/stat; 100 on every Linux we run on.
const clkTck = 100

// cpuTimes is CPU time (user+system) consumed so far by the broker, the PostgreSQL cluster (postmaster
// and all its children) and this load generator. Reading it before and after a scenario shows where the
// two cores went.
type cpuTimes struct {
	Broker, Postgres, Harness time.Duration
	Proxy                     time.Duration // -via-proxy: the queen-proxy the bench started
	Machine                   time.Duration // all CPUs, all processes (busy = not idle/iowait)
}

type cpuProbe struct {
	brokerPIDs  []int // none = unknown (remote broker)
	postgresPID int   // postmaster; 0 = unknown
	proxyPID    int   // -via-proxy; 0 = none
}

func (p cpuProbe) read() cpuTimes {
	var t cpuTimes
	for _, pid := range p.brokerPIDs {
		c, _, _ := procCPU(pid)
		t.Broker += c
	}
	if p.postgresPID != 0 {
		t.Postgres = treeCPU(p.postgresPID)
	}
	if p.proxyPID != 0 {
		t.Proxy, _, _ = procCPU(p.proxyPID)
	}
	t.Harness, _, _ = procCPU(os.Getpid())
	t.Machine = machineBusy()
	return t
}

// machineBusy is the busy time of all CPUs from the first line of /proc/stat. What is busy beyond broker,
// PostgreSQL and harness is other load on the host, which makes the numbers noisy.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 7 { // guest time is already counted in user
			break
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * time.Second / clkTck
}

func (t cpuTimes) sub(o cpuTimes) cpuTimes {
	return cpuTimes{Broker: t.Broker - o.Broker, Postgres: t.Postgres - o.Postgres, Harness: t.Harness - o.Harness, Proxy: t.Proxy - o.Proxy, Machine: t.Machine - o.Machine}
}

// cpuShare is t over sec seconds in percent of one core.
func cpuShare(t cpuTimes, sec float64) CPUShare {
	if sec <= 0 {
		return CPUShare{}
	}
	pct := func(d time.Duration) float64 { return round1(100 * d.Seconds() / sec) }
	return CPUShare{Broker: pct(t.Broker), Postgres: pct(t.Postgres), Harness: pct(t.Harness), Proxy: pct(t.Proxy),
		Other: max(0, pct(t.Machine-t.Broker-t.Postgres-t.Harness-t.Proxy))}
}

// procCPU returns utime+stime and the parent pid of pid.
func procCPU(pid int) (time.Duration, int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name is in parentheses and may contain spaces; fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); ppid is field 4, utime 14, stime 15.
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clkTck, ppid, nil
}

// treeCPU sums the CPU of root, of its live direct children (PostgreSQL backends and auxiliary processes
// are all children of the postmaster) and of its reaped children (cutime+cstime of root), so the total
// stays monotonic when backends exit.
func treeCPU(root int) time.Duration {
	total, _, _ := procCPU(root)
	total += reapedCPU(root)
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == root {
			continue
		}
		if c, ppid, err := procCPU(pid); err == nil && ppid == root {
			total += c
		}
	}
	return total
}

// reapedCPU is cutime+cstime of pid: CPU of its children that exited and were waited for.
func reapedCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0
	}
	cut, _ := strconv.ParseInt(f[13], 10, 64)
	cst, _ := strconv.ParseInt(f[14], 10, 64)
	return time.Duration(cut+cst) * time.Second / clkTck
}
