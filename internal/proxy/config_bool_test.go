package proxy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/setting"
)

// TestEveryProxySwitchReadsEverySpelling walks the proxy's variable table: a variable whose default is
// true or false is a switch, and it must read every spelling internal/setting accepts (any case)
// as the broker and queenctl do, and refuse anything else naming itself. The proxy has no switch today;
// this keeps a new one from failing open.
func TestEveryProxySwitchReadsEverySpelling(t *testing.T) {
	load := func(name, v string) string {
		c, err := proxy.LoadConfig(func(k string) string {
			switch k {
			case name:
				return v
			case "QUEEN_PROXY_DATABASE_URL":
				return "postgres://u@localhost/db"
			}
			return ""
		})
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("%+v", c)
	}
	for _, v := range proxy.EnvVars {
		if v.Default != "true" && v.Default != "false" {
			continue
		}
		for want, spellings := range map[string][]string{"true": setting.BoolSpellings.True, "false": setting.BoolSpellings.False} {
			ref := load(v.Name, want)
			require.NotContains(t, ref, "error:", v.Name)
			for _, s := range spellings {
				require.Equal(t, ref, load(v.Name, strings.ToUpper(s)), "%s=%s", v.Name, s)
				require.Equal(t, ref, load(v.Name, s), "%s=%s", v.Name, s)
			}
		}
		require.Contains(t, load(v.Name, "maybe"), "error: ")
		require.Contains(t, load(v.Name, "maybe"), v.Name)
	}
}
