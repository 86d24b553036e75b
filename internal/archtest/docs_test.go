package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// repoRoot is two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return root
}

// codePath matches a path in the docs that may name a file or folder of this repository: a backquoted
// one, or a bare one ending in a file extension. Paths start at the repository's root or inside
// internal/ (the docs write `engine/ack.go` for internal/engine/ack.go); `pkg.Symbol` names the package.
var codePath = regexp.MustCompile("`((?:[a-z0-9_-]+/)+[A-Za-z0-9_.-]*)`|\\b((?:[a-z0-9_-]+/)+[A-Za-z0-9_-]+\\.(?:go|sql|md|sh|js|ts|py|json|png))\\b")

// symbol is the `.Name` of a Go identifier after a package path.
var symbol = regexp.MustCompile(`\.[A-Za-z_][A-Za-z0-9_]*$`)

// TestDocPathsExist keeps the docs from naming files that are not there: every backquoted path in
// README.md and docs/*.md that looks like one of ours must exist, from the root or from internal/.
func TestDocPathsExist(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	tops := map[string]bool{}
	for _, dir := range []string{root, filepath.Join(root, "internal")} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				tops[e.Name()] = true
			}
		}
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	readmes, err := filepath.Glob(filepath.Join(root, "*", "*", "README.md")) // sdks/js, sdks/python
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(root, "*", "README.md")) // client, examples
	require.NoError(t, err)
	docs = append(append(append(docs, filepath.Join(root, "README.md")), readmes...), more...)
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range codePath.FindAllStringSubmatch(string(text), -1) {
			p := strings.TrimSuffix(m[1]+m[2], "/")
			if !exists(filepath.Join(root, p)) && !exists(filepath.Join(root, "internal", p)) {
				p = symbol.ReplaceAllString(p, "")
			}
			if strings.ContainsAny(p, "*<>") || !tops[strings.SplitN(p, "/", 2)[0]] {
				continue // a glob, a placeholder, or not a path of ours (a URL path, a package import path)
			}
			if exists(filepath.Join(root, p)) || exists(filepath.Join(root, "internal", p)) {
				continue
			}
			t.Errorf("%s names %s, which does not exist", strings.TrimPrefix(doc, root+"/"), p)
		}
		// A link to a section of the same page names a heading of it.
		anchors := map[string]bool{}
		for _, h := range heading.FindAllStringSubmatch(string(text), -1) {
			anchors[slug(h[1])] = true
		}
		for _, m := range localLink.FindAllStringSubmatch(string(text), -1) {
			if !anchors[m[1]] {
				t.Errorf("%s links to #%s, which is no heading of it", strings.TrimPrefix(doc, root+"/"), m[1])
			}
		}
		// A page named alone is one of docs/ or the root's: the docs cite nothing outside the repository.
		for _, m := range mdName.FindAllStringSubmatch(string(text), -1) {
			if !exists(filepath.Join(root, "docs", m[1])) && !exists(filepath.Join(root, m[1])) {
				t.Errorf("%s names %s, which is neither in docs/ nor at the root", strings.TrimPrefix(doc, root+"/"), m[1])
			}
		}
	}
}

var (
	heading   = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	localLink = regexp.MustCompile(`\]\(#([^)]+)\)`)
	notSlug   = regexp.MustCompile(`[^a-z0-9 _-]`)
)

// slug is the anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.
func slug(h string) string {
	return strings.ReplaceAll(notSlug.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
}

// mdName is a Markdown file named without a folder.
var mdName = regexp.MustCompile(`(?:^|[\s(\x60"'])([A-Za-z0-9_-]+\.md)\b`)

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestLockingDocNamesEveryMutex holds docs/locking.md to its first sentence: every sync.Mutex and
// sync.RWMutex field of the broker's and the proxy's code is named there as `Type.field` (or `v.field` for a
// variable of an unnamed struct type). queenctl
// (internal/ctl) and the test harness (internal/testenv) are neither.
func TestLockingDocNamesEveryMutex(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "locking.md"))
	require.NoError(t, err)
	var missing []string
	fset := token.NewFileSet()
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "ctl" || d.Name() == "testenv" || d.Name() == "queenctl") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				// A struct type's fields, named Type.field, and those of a variable of an unnamed
				// struct type (var v struct{ mu sync.Mutex }), named v.field.
				var owner string
				var st *ast.StructType
				switch spec := n.(type) {
				case *ast.TypeSpec:
					owner, st = spec.Name.Name, asStruct(spec.Type)
				case *ast.ValueSpec:
					if len(spec.Names) == 1 {
						owner, st = spec.Names[0].Name, asStruct(spec.Type)
					}
				}
				if st == nil {
					return true
				}
				for _, field := range st.Fields.List {
					sel, ok := field.Type.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "Mutex" && sel.Sel.Name != "RWMutex" {
						continue
					}
					if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "sync" {
						continue
					}
					names := []string{sel.Sel.Name} // an embedded mutex is named by its type
					if len(field.Names) > 0 {
						names = names[:0]
						for _, n := range field.Names {
							names = append(names, n.Name)
						}
					}
					for _, n := range names {
						name := owner + "." + n
						if !strings.Contains(string(doc), "`"+name+"`") {
							missing = append(missing, name+" ("+strings.TrimPrefix(path, root+"/")+")")
						}
					}
				}
				return true
			})
			return nil
		})
		require.NoError(t, err)
	}
	sort.Strings(missing)
	require.Empty(t, missing, "mutexes missing from docs/locking.md, each with what it guards and its order")
}

func asStruct(e ast.Expr) *ast.StructType {
	st, _ := e.(*ast.StructType)
	return st
}
