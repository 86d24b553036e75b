package client

import (
	"os"
	"strings"
)

// ServerEnv and ServerEnvAlias name the environment variables that give a broker URL to the tools built
// on this package (queenctl, the examples): ServerEnv wins; ServerEnvAlias is read when it is unset,
// because the original clients' test helpers use that name.
const (
	ServerEnv      = "QUEEN_SERVER"
	ServerEnvAlias = "QUEEN_URL"
)

// ServerFromEnv is the broker URL (or comma-separated URLs) of $QUEEN_SERVER, else $QUEEN_URL, else "".
func ServerFromEnv() string { return ServerFrom(os.Getenv) }

// ServerFrom is ServerFromEnv over another environment (a test's, a tool's own lookup).
func ServerFrom(getenv func(string) string) string {
	if v := getenv(ServerEnv); v != "" {
		return v
	}
	return getenv(ServerEnvAlias)
}

// URLsFromEnv is ServerFromEnv split at commas into Config.URLs, or fallback when neither is set.
func URLsFromEnv(fallback ...string) []string {
	if v := ServerFromEnv(); v != "" {
		return strings.Split(v, ",")
	}
	return fallback
}
