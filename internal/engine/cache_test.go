package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTTLCache drives the cache with a clock parameter: expiry, the size bound, putAll and forgetting.
func TestTTLCache(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := newTTLCache[string, int](10*time.Second, 3, clock)

	_, ok := c.get("a")
	require.False(t, ok, "empty cache")
	c.put("a", 1)
	v, ok := c.get("a")
	require.True(t, ok)
	require.Equal(t, 1, v)

	now = now.Add(9 * time.Second)
	_, ok = c.get("a")
	require.True(t, ok, "fresh until ttl")
	now = now.Add(time.Second)
	_, ok = c.get("a")
	require.False(t, ok, "expired at ttl")

	c.put("a", 2) // put refreshes the entry's age
	v, ok = c.get("a")
	require.True(t, ok)
	require.Equal(t, 2, v)

	c.putAll(map[string]int{"b": 3, "c": 4})
	require.Equal(t, 3, c.len())
	c.put("d", 5) // a fourth entry passes max: the cache starts over
	require.Equal(t, 1, c.len())
	_, ok = c.get("a")
	require.False(t, ok)
	v, ok = c.get("d")
	require.True(t, ok)
	require.Equal(t, 5, v)

	c.putAll(map[string]int{"x1": 1, "x2": 2})
	c.forget("x1", "missing")
	_, ok = c.get("x1")
	require.False(t, ok)
	c.forgetIf(func(k string) bool { return k[0] == 'x' })
	_, ok = c.get("x2")
	require.False(t, ok)
	_, ok = c.get("d")
	require.True(t, ok, "forgetIf keeps what it does not match")

	forever := newTTLCache[int, string](0, 10, clock)
	forever.put(1, "one")
	now = now.Add(1000 * time.Hour)
	v2, ok := forever.get(1)
	require.True(t, ok, "ttl 0 never expires")
	require.Equal(t, "one", v2)
}

// TestReadThrough answers cached keys from the cache, fetches only the missing ones (repeats included,
// in order), caches what was fetched, and caches nothing when the fetch fails.
func TestReadThrough(t *testing.T) {
	t.Parallel()
	c := newTTLCache[string, int](time.Minute, 100, func() time.Time { return time.Time{} }) // a clock that stands still
	c.put("a", 1)
	var asked [][]string
	fetch := func(missing []string) (map[string]int, error) {
		asked = append(asked, missing)
		out := map[string]int{}
		for _, k := range missing {
			out[k] = len(k) * 10
		}
		return out, nil
	}
	got, err := readThrough(c, []string{"a", "bb", "a", "bb"}, fetch)
	require.NoError(t, err)
	require.Equal(t, []int{1, 20, 1, 20}, got)
	require.Equal(t, [][]string{{"bb", "bb"}}, asked)

	got, err = readThrough(c, []string{"bb", "a"}, fetch)
	require.NoError(t, err)
	require.Equal(t, []int{20, 1}, got)
	require.Len(t, asked, 1, "every key was cached: no fetch")

	_, err = readThrough(c, []string{"ccc"}, func([]string) (map[string]int, error) { return nil, errors.New("down") })
	require.EqualError(t, err, "down")
	_, ok := c.get("ccc")
	require.False(t, ok, "a failed fetch caches nothing")
}
