package ctl

import (
	"strconv"
	"strings"
	"time"
)

// parseTime reads the time arguments of --from, --to and --since: "now"; "beginning", "start" or
// "earliest" (the Unix epoch); "<duration> ago" or a bare duration (now minus it; Go units plus d for days); Unix seconds;
// RFC 3339; "YYYY-MM-DDTHH:MM:SS"; "YYYY-MM-DD HH:MM:SS"; "YYYY-MM-DD" (all UTC when no zone).
func parseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "now":
		return now, nil
	case "beginning", "start", "earliest":
		return time.Unix(0, 0).UTC(), nil
	}
	ago := strings.TrimSpace(strings.TrimSuffix(s, "ago"))
	if days, ok := strings.CutSuffix(ago, "d"); ok { // Go durations stop at hours
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(ago); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 1e9 {
		return time.Unix(n, 0).UTC(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usageErr("cannot read time %q (now, beginning, 10m ago, unix seconds, RFC 3339, YYYY-MM-DD[ HH:MM:SS])", s)
}

// timeFlag parses an optional time flag; "" is the zero time.
func timeFlag(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return parseTime(s, time.Now().UTC())
}
