// Package gendoc is the body of the commands that write the generated documents (docs/reference.md,
// docs/configuration.md, docs/cli.md): each renders its document and hands it to Main.
package gendoc

import (
	"flag"
	"fmt"
	"os"
)

// Main writes render's document to the file named by -o (def when not given) and exits 1 with the
// command's name and the cause when the file cannot be written.
func Main(name, def string, render func() []byte) {
	out := flag.String("o", def, "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, render(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
