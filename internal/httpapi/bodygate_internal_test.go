package httpapi

import (
	"context"
	"testing"
)

// TestBodyGateAdmitsWithinBudget: large bodies share a byte budget; one that does not fit waits (here:
// gives up with its cancelled context) until another is released, and a body larger than the budget
// still gets through alone.
func TestBodyGateAdmitsWithinBudget(t *testing.T) {
	g := newBodyGate(64 << 20)
	ctx := context.Background()
	first, err := g.acquire(ctx, 48<<20)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.acquire(cancelled, 48<<20); err == nil {
		t.Fatal("a second 48 MB body was admitted next to the first within 64 MB")
	}
	small, err := g.acquire(ctx, 16<<20)
	if err != nil {
		t.Fatal("a body that fits was refused:", err)
	}
	small()
	first()
	huge, err := g.acquire(ctx, 1<<30)
	if err != nil {
		t.Fatal("a body over the budget must pass alone:", err)
	}
	huge()
	if len(g.tokens) != cap(g.tokens) {
		t.Fatalf("tokens leaked: %d of %d", len(g.tokens), cap(g.tokens))
	}
}
