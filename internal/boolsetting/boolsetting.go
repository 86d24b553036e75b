// Package boolsetting reads the boolean settings of every binary (the broker's environment, the
// proxy's, queenctl's contexts file) with one rule, so that no switch reads a spelling as "off" that
// its operator meant as "on": the usual spellings are accepted in any case, anything else is an
// error naming the setting.
package boolsetting

import (
	"fmt"
	"strings"
)

// Spellings lists the accepted values, true ones first; case and surrounding blanks do not matter.
var Spellings = struct{ True, False []string }{
	True:  []string{"1", "true", "yes", "on"},
	False: []string{"0", "false", "no", "off"},
}

// Parse reads value as the boolean setting name. An unknown spelling is an error naming the setting
// and the accepted spellings, so that a binary refuses to start rather than guess.
func Parse(name, value string) (bool, error) {
	b, err := Value(value)
	if err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// Value is Parse for a caller that names the setting itself (the broker's table wraps every
// variable's error with its name).
func Value(value string) (bool, error) {
	v := strings.ToLower(strings.TrimSpace(value))
	for _, s := range Spellings.True {
		if v == s {
			return true, nil
		}
	}
	for _, s := range Spellings.False {
		if v == s {
			return false, nil
		}
	}
	return false, fmt.Errorf("want one of 1, true, yes, on or 0, false, no, off (any case), got %q", value)
}

// IsBool reports whether value is one of the accepted spellings: a setting whose default is one is a
// boolean setting, which tests use to check that every such setting goes through Parse.
func IsBool(value string) bool {
	_, err := Value(value)
	return err == nil
}
