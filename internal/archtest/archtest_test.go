package archtest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/queen-go/queen/"

// rules: a package (by path below the module) must not import, in its non-test files, any path that
// starts with one of the prefixes. Indirect edges are fine: httpapi reaches store through engine.
var rules = []struct {
	pkg       string
	forbidden []string
	why       string
}{
	{"internal/httpapi", []string{module + "internal/store", "github.com/jackc/"},
		"the transport talks to the engine only; driver types stay in store"},
	{"internal/engine", []string{"net/http", "github.com/jackc/"},
		"the engine knows nothing of HTTP, and store converts the driver's types at its edge"},
	{"internal/engine", []string{module + "internal/views", module + "internal/streams"},
		"the read models and the streams runtime sit beside the engine and call it; it never calls them"},
	{"internal/views", []string{module + "internal/httpapi", "net/http", "github.com/jackc/"},
		"the read models answer in typed values over the store; the transport maps them to HTTP"},
	{"internal/streams", []string{module + "internal/httpapi", module + "internal/views", "net/http", "github.com/jackc/"},
		"the streams service answers in typed values over the store and the engine; the transport maps them to HTTP"},
	{"internal/auth", []string{module + "internal/config"},
		"auth takes its own Options; the broker converts the configuration"},
	{"internal/maintenance", []string{module + "internal/engine", module + "internal/httpapi", "net/http"},
		"the periodic jobs need only the store; the engine hands its counters in through an interface"},
	{"internal/store", []string{module + "internal/engine", module + "internal/httpapi"},
		"store is below the engine"},
	{"client", []string{module + "internal/"}, "the SDK is a public package on the standard library"},
}

// pgxImporters are the only packages whose non-test files may import the driver: the broker's store, the
// migration runner it shares with the proxy, the proxy's store, the test harness, the private-cluster
// starter (it waits for a promoted standby to take writes) and the load generator (its plain-INSERT baseline). docs/architecture.md says so.
var pgxImporters = map[string]bool{
	"internal/store": true, "internal/pgschema": true, "internal/proxy/proxystore": true,
	"internal/testenv": true, "internal/pgcluster": true, "bench": true,
}

func TestPgxImporters(t *testing.T) {
	t.Parallel()
	for p, imps := range listImports(t) {
		for _, imp := range imps {
			if strings.HasPrefix(imp, "github.com/jackc/") && !pgxImporters[p] {
				t.Errorf("%s imports %s: only %v may talk to the driver", p, imp, pgxImporters)
			}
		}
	}
}

// listImports maps every package of the module (path below the module) to its non-test imports.
func listImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "github.com/queen-go/queen/...").Output()
	require.NoError(t, err, "go list")
	imports := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		require.NoError(t, dec.Decode(&p))
		imports[strings.TrimPrefix(p.ImportPath, module)] = p.Imports
	}
	return imports
}

type pkg struct {
	ImportPath string
	Imports    []string
}

func TestImportRules(t *testing.T) {
	t.Parallel()
	imports := listImports(t)
	for _, r := range rules {
		imps, ok := imports[r.pkg]
		require.True(t, ok, "package %s not found by go list", r.pkg)
		for _, imp := range imps {
			for _, f := range r.forbidden {
				if strings.HasPrefix(imp, f) {
					t.Errorf("%s imports %s: %s", r.pkg, imp, r.why)
				}
			}
		}
	}
}
