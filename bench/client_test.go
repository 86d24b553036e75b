package main

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestClientBrokers: with several brokers a client sends each request to the next one in turn, and a
// pinned view keeps one broker, the pinned views taking the brokers in turn.
func TestClientBrokers(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	var urls []string
	for _, name := range []string{"a", "b"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			hits[name]++
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	c := newClient(urls, 2)
	t.Cleanup(c.close)
	send := func(c *client, n int) map[string]int {
		t.Helper()
		mu.Lock()
		clear(hits)
		mu.Unlock()
		for range n {
			if _, err := c.pop(t.Context(), "q", "", 1, 1, 0); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return map[string]int{"a": hits["a"], "b": hits["b"]}
	}
	if got := send(c, 4); got["a"] != 2 || got["b"] != 2 {
		t.Fatalf("round robin: %v, want 2 each", got)
	}
	p1, p2 := c.pinned(), c.pinned()
	if p1.bases[0] == p2.bases[0] {
		t.Fatalf("two pinned views on one broker: %s", p1.bases[0])
	}
	for _, p := range []*client{p1, p2} {
		got := send(p, 3)
		if got["a"]+got["b"] != 3 || (got["a"] != 0 && got["b"] != 0) {
			t.Fatalf("pinned to %s: %v, want all 3 on one broker", p.bases[0], got)
		}
	}
	if one := newClient(urls[:1], 1); one.base() != urls[0] || one.pinned().bases[0] != urls[0] {
		t.Fatal("a client of one broker must always send to it")
	}
}
