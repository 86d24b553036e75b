// Command refgen writes docs/reference.md from the route table (httpapi.Reference). It runs from
// `go generate ./internal/httpapi` (`make gen`).
package main

import (
	"github.com/queen-go/queen/internal/gendoc"
	"github.com/queen-go/queen/internal/httpapi"
)

func main() { gendoc.Main("refgen", "docs/reference.md", httpapi.Reference) }
