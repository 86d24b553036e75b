// Command docgen writes docs/cli.md from queenctl's command tree (go generate ./internal/ctl).
package main

import (
	"github.com/queen-go/queen/internal/ctl"
	"github.com/queen-go/queen/internal/gendoc"
)

func main() { gendoc.Main("docgen", "docs/cli.md", ctl.Markdown) }
