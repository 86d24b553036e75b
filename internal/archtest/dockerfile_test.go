package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDockerfileBuildsEveryCommand keeps the Dockerfile in step with cmd/ (no Docker engine runs
// here to build it): it builds every command of cmd/, and with CGO off, which its distroless static
// image requires, only the standard library may bring cgo files (each has a pure-Go fallback).
func TestDockerfileBuildsEveryCommand(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	require.NoError(t, err)
	df := string(b)
	require.Contains(t, df, "CGO_ENABLED=0")
	built := map[string]bool{}
	for _, m := range regexp.MustCompile(`go build [^\n]* \./cmd/([a-z-]+)`).FindAllStringSubmatch(df, -1) {
		built[m[1]] = true
	}
	cmds, err := os.ReadDir(filepath.Join(root, "cmd"))
	require.NoError(t, err)
	var pkgs []string
	for _, c := range cmds {
		if c.IsDir() {
			require.True(t, built[c.Name()], "the Dockerfile does not build ./cmd/%s", c.Name())
			delete(built, c.Name())
			pkgs = append(pkgs, "./cmd/"+c.Name())
		}
	}
	require.Empty(t, built, "the Dockerfile builds commands that are not in cmd/")

	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if and .CgoFiles (not .Standard)}}{{.ImportPath}}{{end}}"}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Empty(t, strings.TrimSpace(string(out)), "packages that need cgo, which the static image cannot have")
}
