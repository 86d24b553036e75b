package main

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/queen-go/queen/internal/version"
)

// TestHelpPrintsUsage: --help and -h (also after serve) print the usage naming docs/configuration.md,
// which exists, and exit 0 without starting anything; an unknown argument exits 2.
func TestHelpPrintsUsage(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"serve", "--help"}, {"serve", "-h"}, {"help"}} {
		var out, errOut bytes.Buffer
		code, done := parseArgs(args, &out, &errOut)
		if !done || code != 0 {
			t.Fatalf("%v: code %d done %v", args, code, done)
		}
		if !strings.Contains(out.String(), "docs/configuration.md") || !strings.Contains(out.String(), "DATABASE_URL") {
			t.Fatalf("%v: usage does not name the reference: %s", args, out.String())
		}
	}
	if _, err := os.Stat("../../docs/configuration.md"); err != nil {
		t.Fatalf("the usage names a file that does not exist: %v", err)
	}
	var out, errOut bytes.Buffer
	if code, done := parseArgs([]string{"serve", "--bogus"}, &out, &errOut); !done || code != 2 {
		t.Fatalf("unknown argument: code %d done %v", code, done)
	}
	if code, done := parseArgs([]string{"serve"}, &out, &errOut); done || code != 0 {
		t.Fatalf("serve must run the broker")
	}
}

// TestVersionPrintsTheBuild: `queen version` and `queen --version` print the version, the commit and
// the Go version, and exit 0 without starting anything.
func TestVersionPrintsTheBuild(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		code, done := parseArgs(args, &out, &errOut)
		if !done || code != 0 {
			t.Fatalf("%v: code %d done %v", args, code, done)
		}
		want := version.String("queen") + "\n"
		if out.String() != want || !strings.Contains(want, runtime.Version()) || !strings.Contains(want, "commit ") ||
			!strings.HasPrefix(want, "queen "+version.Release+" ") {
			t.Fatalf("%v: printed %q, want %q with the version, commit and %s", args, out.String(), want, runtime.Version())
		}
	}
}
