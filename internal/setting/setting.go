// Package setting reads the settings of every binary (the broker's environment, the proxy's,
// queenctl's contexts file, the bench's flags) with one rule per kind, so that no switch reads a
// spelling as "off" that its operator meant as "on" and no list keeps an entry its operator did not
// write: booleans accept the usual spellings in any case and anything else is an error naming the
// setting; lists are comma-separated with blanks and empty entries dropped.
package setting

import (
	"fmt"
	"strings"
)

// BoolSpellings lists the accepted boolean values, true ones first; case and surrounding blanks do
// not matter.
var BoolSpellings = struct{ True, False []string }{
	True:  []string{"1", "true", "yes", "on"},
	False: []string{"0", "false", "no", "off"},
}

// ParseBool reads value as the boolean setting name. An unknown spelling is an error naming the
// setting and the accepted spellings, so that a binary refuses to start rather than guess.
func ParseBool(name, value string) (bool, error) {
	b, err := Bool(value)
	if err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// Bool is ParseBool for a caller that names the setting itself (the broker's table wraps every
// variable's error with its name).
func Bool(value string) (bool, error) {
	v := strings.ToLower(strings.TrimSpace(value))
	for _, s := range BoolSpellings.True {
		if v == s {
			return true, nil
		}
	}
	for _, s := range BoolSpellings.False {
		if v == s {
			return false, nil
		}
	}
	return false, fmt.Errorf("want one of 1, true, yes, on or 0, false, no, off (any case), got %q", value)
}

// IsBool reports whether value is one of the accepted spellings: a setting whose default is one is a
// boolean setting, which tests use to check that every such setting goes through ParseBool.
func IsBool(value string) bool {
	_, err := Bool(value)
	return err == nil
}

// List splits a comma-separated setting into its entries, trimmed of blanks; empty entries (a
// trailing comma, "a,,b") are dropped, so an empty or all-blank value is an empty list.
func List(value string) []string {
	var out []string
	for p := range strings.SplitSeq(value, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
