package config

import (
	"bytes"
	"fmt"
	"strings"
)

//go:generate go run ./confgen -o ../../docs/configuration.md

// ReferencePath is where the generated variable reference lives in the repository.
const ReferencePath = "docs/configuration.md"

// Reference renders docs/configuration.md from the variable table: every variable, its default and
// its meaning. A test keeps the file in step with the table.
func Reference() []byte {
	var b bytes.Buffer
	b.WriteString("# Configuration\n\n")
	b.WriteString("<!-- Generated from internal/config (the variable table) by `make gen`; do not edit. -->\n\n")
	b.WriteString("`queen serve` reads its whole configuration from the environment. An empty variable means\n")
	b.WriteString("its default; a malformed value stops the broker at startup with an error naming the variable.\n")
	b.WriteString("Without `DATABASE_URL` and every `PG_*` variable the broker starts an embedded PostgreSQL in\n")
	b.WriteString("`QUEEN_DATA_DIR`.\n\n")
	b.WriteString("| Variable | Default | Meaning |\n| --- | --- | --- |\n")
	for _, v := range Vars {
		def := "(empty)"
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		doc := strings.ReplaceAll(v.Doc, "|", `\|`)
		if v.Secret {
			doc += " (secret: never logged)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, def, doc)
	}
	return b.Bytes()
}

// Usage is the text of `queen --help`.
func Usage() string {
	var b strings.Builder
	b.WriteString("usage: queen [serve] [-h|--help]\n       queen version|--version\n\n")
	b.WriteString("Runs the Queen broker (HTTP API, default port 6632) until SIGINT or SIGTERM;\n")
	b.WriteString("`queen version` prints its version, the commit it was built from and its Go version.\n")
	b.WriteString("Configuration comes from the environment; every variable, default and meaning is in\n")
	b.WriteString(ReferencePath + ". Variables (default):\n\n")
	for _, v := range Vars {
		fmt.Fprintf(&b, "  %-28s %s\n", v.Name, v.Default)
	}
	return b.String()
}
