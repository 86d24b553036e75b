package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/setting"
)

// loadOutcome is what Load makes of env over a base that configures a database and a JWT secret (so
// that switching JWT on is valid), in a form two loads can be compared by.
func loadOutcome(env map[string]string) string {
	base := map[string]string{"DATABASE_URL": "postgres://u@localhost/db", "JWT_SECRET": "s"}
	for k, v := range env {
		base[k] = v
	}
	c, err := Load(func(k string) string { return base[k] })
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%+v", c)
}

// TestEverySwitchReadsEverySpelling walks the variable table: every variable whose default is true
// or false is a switch, and each one reads every accepted spelling (any case) as its meaning and
// refuses anything else with an error naming it, so that no switch fails open.
func TestEverySwitchReadsEverySpelling(t *testing.T) {
	t.Parallel()
	var switches []string
	for _, v := range Vars {
		if strings.Contains(v.Doc, boolSpellings) {
			require.Contains(t, []string{"true", "false"}, v.Default, "%s: a switch's default is true or false", v.Name)
		}
		if v.Default != "true" && v.Default != "false" {
			continue
		}
		switches = append(switches, v.Name)
		for want, spellings := range map[string][]string{"true": setting.BoolSpellings.True, "false": setting.BoolSpellings.False} {
			ref := loadOutcome(map[string]string{v.Name: want})
			require.NotContains(t, ref, "error:", v.Name)
			for _, s := range spellings {
				for _, spelled := range []string{s, strings.ToUpper(s)} {
					require.Equal(t, ref, loadOutcome(map[string]string{v.Name: spelled}), "%s=%s", v.Name, spelled)
				}
			}
		}
		require.NotEqual(t, loadOutcome(map[string]string{v.Name: "true"}), loadOutcome(map[string]string{v.Name: "false"}),
			"%s changes nothing", v.Name)
		for _, bad := range []string{"maybe", "2", "enabled", "t"} {
			_, err := Load(func(k string) string {
				if k == v.Name {
					return bad
				}
				return ""
			})
			require.ErrorContains(t, err, v.Name, "%s=%s", v.Name, bad)
			require.ErrorContains(t, err, fmt.Sprintf("%q", bad))
		}
	}
	require.Subset(t, switches, []string{"PG_USE_SSL", "JWT_ENABLED", "JWT_REQUIRE_EXP", "METRICS_REQUIRE_AUTH"})
}

func TestPGUseSSLSpellings(t *testing.T) {
	t.Parallel()
	for v, mode := range map[string]string{"yes": "require", "1": "require", "ON": "require", "no": "disable", "False": "disable"} {
		c, err := Load(func(k string) string { return map[string]string{"PG_HOST": "db", "PG_USE_SSL": v}[k] })
		require.NoError(t, err, v)
		require.Contains(t, c.DatabaseURL, "sslmode="+mode, v)
	}
}

// TestPGHostList: comma lists in PG_HOST (and PG_PORT) build a multi-host URL that targets the
// read-write server; one host keeps the plain URL.
func TestPGHostList(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) (Config, error) { return Load(func(k string) string { return env[k] }) }
	c, err := load(map[string]string{"PG_HOST": "db1,db2", "PG_PORT": "5433"})
	require.NoError(t, err)
	require.Equal(t, "postgres://postgres:postgres@db1:5433,db2:5433/postgres?sslmode=disable&target_session_attrs=read-write", c.DatabaseURL)
	c, err = load(map[string]string{"PG_HOST": "db1, db2", "PG_PORT": "5433,5434"})
	require.NoError(t, err)
	require.Contains(t, c.DatabaseURL, "@db1:5433,db2:5434/")
	c, err = load(map[string]string{"PG_HOST": "db1"})
	require.NoError(t, err)
	require.Equal(t, "postgres://postgres:postgres@db1:5432/postgres?sslmode=disable", c.DatabaseURL)
	_, err = load(map[string]string{"PG_HOST": "db1,db2,db3", "PG_PORT": "1,2"})
	require.ErrorContains(t, err, "3 hosts")
}
