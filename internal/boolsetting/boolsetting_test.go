package boolsetting

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAcceptsTheUsualSpellingsInAnyCase(t *testing.T) {
	for want, spellings := range map[bool][]string{true: Spellings.True, false: Spellings.False} {
		for _, s := range spellings {
			for _, v := range []string{s, strings.ToUpper(s), " " + strings.ToUpper(s[:1]) + s[1:] + " "} {
				got, err := Parse("X", v)
				require.NoError(t, err, v)
				require.Equal(t, want, got, v)
				require.True(t, IsBool(v), v)
			}
		}
	}
}

func TestParseRefusesAnythingElseNamingTheSetting(t *testing.T) {
	for _, v := range []string{"", "maybe", "2", "enabled", "y", "t", "tru e"} {
		_, err := Parse("JWT_ENABLED", v)
		require.Error(t, err, v)
		require.Contains(t, err.Error(), "JWT_ENABLED")
		require.False(t, IsBool(v), v)
	}
}
