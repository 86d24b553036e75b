// Command confgen writes docs/configuration.md from the variable table (config.Reference). It runs from
// `go generate ./internal/config` (`make gen`).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/queen-go/queen/internal/config"
)

func main() {
	out := flag.String("o", config.ReferencePath, "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, config.Reference(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "confgen:", err)
		os.Exit(1)
	}
}
