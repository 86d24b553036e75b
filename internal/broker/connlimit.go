package broker

import "syscall"

// ownFiles is the room left, beyond the database pool, for the descriptors the broker itself holds:
// the listener, the LISTEN session, spool and log files, an embedded PostgreSQL's pipes, pprof.
const ownFiles = 128

// connectionCap is MAX_CONNECTIONS, or when that is 0 what the open-file limit leaves once the pool
// and the broker's own files are counted: past it accept(2) fails with EMFILE and the server stops
// accepting for everyone, where a refused connection tells its client to try another broker.
func connectionCap(set, poolSize int) int {
	if set > 0 {
		return set
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 10000
	}
	return int(max(int64(min(r.Cur, 1<<30))-int64(poolSize)-ownFiles, 16))
}
