// Command refgen writes docs/reference.md from the route table (httpapi.Reference). It runs from
// `go generate ./internal/httpapi` (`make gen`).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/queen-go/queen/internal/httpapi"
)

func main() {
	out := flag.String("o", "docs/reference.md", "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, httpapi.Reference(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "refgen:", err)
		os.Exit(1)
	}
}
