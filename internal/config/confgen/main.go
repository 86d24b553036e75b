// Command confgen writes docs/configuration.md from the variable table (config.Reference). It runs from
// `go generate ./internal/config` (`make gen`).
package main

import (
	"github.com/queen-go/queen/internal/config"
	"github.com/queen-go/queen/internal/gendoc"
)

func main() { gendoc.Main("confgen", config.ReferencePath, config.Reference) }
