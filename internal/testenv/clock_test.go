package testenv_test

import (
	"testing"
	"time"

	"github.com/queen-go/queen/internal/testenv"
)

func TestClock(t *testing.T) {
	t.Parallel()
	c := testenv.NewClock()
	if before, now := time.Now(), c.Now(); now.Before(before) {
		t.Fatalf("a fresh clock reads %s, behind real time %s", now, before)
	}
	c.Advance(time.Hour)
	c.Advance(-2 * time.Hour) // ignored: the clock never goes back
	if floor, now := time.Now().Add(time.Hour), c.Now(); now.Before(floor) {
		t.Fatalf("advanced an hour, the clock reads %s, before %s", now, floor)
	}

	c.Freeze()
	frozen := c.Now()
	if again := c.Now(); !again.Equal(frozen) {
		t.Fatalf("a frozen clock moved from %s to %s", frozen, again)
	}
	c.Advance(time.Second)
	if got := c.Now(); !got.Equal(frozen.Add(time.Second)) {
		t.Fatalf("a frozen clock advanced a second reads %s, want %s", got, frozen.Add(time.Second))
	}
}
