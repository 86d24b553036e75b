package httpapi

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/jsonguard"
)

// compareQueryCheck checks checkParams, which reads the query's pairs in order, against the rules
// applied to what url.ParseQuery keeps: it refuses exactly the queries with a bad pair there, with
// the text of one of them.
func compareQueryCheck(raw string) error {
	r := httptest.NewRequest("GET", "/", nil)
	r.URL.RawQuery = raw
	got := checkParams(r, nil)
	q, _ := url.ParseQuery(raw)
	var texts []string
	for k, vs := range q {
		for _, v := range vs {
			if err := checkParam(k, v); err != nil {
				texts = append(texts, err.Error())
			}
		}
	}
	switch {
	case got == nil && texts == nil:
		return nil
	case got == nil || texts == nil:
		return fmt.Errorf("query %q: checkParams says %v, the pairs url.ParseQuery keeps %q", raw, got, texts)
	}
	for _, t := range texts {
		if t == got.Error() {
			return nil
		}
	}
	return fmt.Errorf("query %q: checkParams says %v, the pairs url.ParseQuery keeps %q", raw, got, texts)
}

func TestQueryCheckMatchesParseQuery(t *testing.T) {
	long := strings.Repeat("x", jsonguard.MaxName+1)
	for _, raw := range []string{
		"", "batch=10&consumerGroup=g&wait=true", "a=1&&b=2&", "=v", "k=", "k", "a=%zz&b=" + long, "a;b=" + long + "&c=1",
		"a+b=c%20d", "k=" + long, long + "=v", "k=%00", "k=\xff", "%ff=v", "a=1;b=2", "x=" + url.QueryEscape("é✓"),
		strings.Repeat("a=1&", maxPairsInOrder) + "k=" + long, strings.Repeat("a=1&", maxPairsInOrder+1),
		strings.Repeat("&", 20000) + "k=" + long, // over url.ParseQuery's limit: it keeps nothing
	} {
		require.NoError(t, compareQueryCheck(raw))
	}
}
