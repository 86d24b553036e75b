package testenv

import (
	"bytes"
	"sync"
)

// SyncBuffer collects output written from other goroutines (a logger's handlers, exec's copier of a
// child's output) while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
