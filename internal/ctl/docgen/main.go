// Command docgen writes docs/cli.md from queenctl's command tree (go generate ./internal/ctl).
package main

import (
	"flag"
	"log"
	"os"

	"github.com/queen-go/queen/internal/ctl"
)

func main() {
	out := flag.String("o", "docs/cli.md", "output file")
	flag.Parse()
	if err := os.WriteFile(*out, ctl.Markdown(), 0o644); err != nil {
		log.Fatal(err)
	}
}
