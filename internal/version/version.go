// Package version names the build a binary runs: the release, the VCS commit and the Go toolchain, so
// that every binary's `version` command prints the same three facts the same way.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Release is the release of this source tree. A build may override it with
// -ldflags "-X github.com/queen-go/queen/internal/version.Release=…".
var Release = "0.1.0"

// Info is what a build knows about itself.
type Info struct {
	Release  string
	Commit   string // vcs.revision, with "-dirty" when vcs.modified; "unknown" outside a VCS build
	Go       string // the toolchain that built the binary
	Modified bool
}

// Get reads the build information the Go linker embedded (vcs.revision, vcs.modified, the Go version).
// A binary built outside a checkout, or by `go run`/`go test`, has no VCS stamp: its commit is "unknown".
func Get() Info {
	in := Info{Release: Release, Commit: "unknown", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return in
	}
	if bi.GoVersion != "" {
		in.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Commit = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	if in.Modified && in.Commit != "unknown" {
		in.Commit += "-dirty"
	}
	return in
}

// String is the one-line form every binary prints: "<binary> <release> (commit <sha>, <go version>)".
func String(binary string) string {
	in := Get()
	return fmt.Sprintf("%s %s (commit %s, %s)", binary, in.Release, in.Commit, in.Go)
}
