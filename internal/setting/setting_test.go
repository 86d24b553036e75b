package setting

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseBoolAcceptsTheUsualSpellingsInAnyCase(t *testing.T) {
	for want, spellings := range map[bool][]string{true: BoolSpellings.True, false: BoolSpellings.False} {
		for _, s := range spellings {
			for _, v := range []string{s, strings.ToUpper(s), " " + strings.ToUpper(s[:1]) + s[1:] + " "} {
				got, err := ParseBool("X", v)
				require.NoError(t, err, v)
				require.Equal(t, want, got, v)
				require.True(t, IsBool(v), v)
			}
		}
	}
}

func TestParseBoolRefusesAnythingElseNamingTheSetting(t *testing.T) {
	for _, v := range []string{"", "maybe", "2", "enabled", "y", "t", "tru e"} {
		_, err := ParseBool("JWT_ENABLED", v)
		require.Error(t, err, v)
		require.Contains(t, err.Error(), "JWT_ENABLED")
		require.False(t, IsBool(v), v)
	}
}

func TestListDropsBlanksAndEmptyEntries(t *testing.T) {
	require.Equal(t, []string{"a", "b c", "d"}, List(" a ,, b c,d, "))
	require.Empty(t, List(""))
	require.Empty(t, List(" , "))
}
