package store

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// A query file may hold fragments: SQL that several of its queries share word for word, written once
// so that the copies cannot drift apart. A fragment is a section of its own, from a line
//
//	-- fragment: name
//
// to the next `-- name:` or `-- fragment:` header, and a query takes it in with a line that holds
// only {{name}}: that line becomes the fragment's lines, each indented as the placeholder was. A
// fragment belongs to its file. The expansion happens once, when the package loads, before
// pgschema.MustQueries reads the files, so every named query is the whole text PostgreSQL runs (and
// the query tests prepare, and pop's variants are cut from). Anything it cannot expand exactly panics
// there, as a duplicate query name does: an unknown or unused fragment, a name defined twice, a
// placeholder that is not alone on its line, and a placeholder inside a fragment.
const (
	fragmentHeader = "-- fragment: "
	queryHeader    = "-- name: "
)

// fragmentFS is a directory of query files as pgschema.MustQueries reads it, with the fragments of
// each file expanded (pgschema knows nothing of fragments: the proxy's store has none).
type fragmentFS struct {
	embed.FS
	files map[string][]byte // by path in FS
}

func (f fragmentFS) ReadFile(name string) ([]byte, error) {
	if b, ok := f.files[name]; ok {
		return b, nil
	}
	return f.FS.ReadFile(name)
}

// withFragments expands the fragments of every file of dir in fsys.
func withFragments(fsys embed.FS, dir string) fragmentFS {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		panic(err)
	}
	out := fragmentFS{FS: fsys, files: map[string][]byte{}}
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		b, err := fsys.ReadFile(name)
		if err != nil {
			panic(err)
		}
		text, err := expandFragments(string(b))
		if err != nil {
			panic(fmt.Sprintf("store: %s: %v", name, err))
		}
		out.files[name] = []byte(text)
	}
	return out
}

// fs.ReadFile reads through a ReadFileFS's own ReadFile, and through Open, the unexpanded text,
// otherwise.
var _ fs.ReadFileFS = fragmentFS{}

// expandFragments takes the fragment sections out of one file's text and puts each in place of its
// placeholders.
func expandFragments(text string) (string, error) {
	frags := map[string][]string{}
	var order []string // for a stable error on unused fragments
	var rest []string
	current := "" // the fragment being read; "" outside one
	for _, line := range strings.Split(text, "\n") {
		if name, ok := strings.CutPrefix(line, fragmentHeader); ok {
			current = strings.TrimSpace(name)
			if current == "" {
				return "", fmt.Errorf("fragment without a name")
			}
			if _, dup := frags[current]; dup {
				return "", fmt.Errorf("fragment %s defined twice", current)
			}
			frags[current] = nil
			order = append(order, current)
			continue
		}
		if strings.HasPrefix(line, queryHeader) {
			current = ""
		}
		if current != "" {
			frags[current] = append(frags[current], line)
			continue
		}
		rest = append(rest, line)
	}
	for name, lines := range frags {
		for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) == 0 {
			return "", fmt.Errorf("fragment %s is empty", name)
		}
		frags[name] = lines
	}
	used := map[string]bool{}
	var out []string
	for _, line := range rest {
		name, ok := placeholder(line)
		if !ok {
			out = append(out, line)
			continue
		}
		lines, ok := frags[name]
		if !ok {
			return "", fmt.Errorf("unknown fragment {{%s}}", name)
		}
		used[name] = true
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		for _, l := range lines {
			if strings.TrimSpace(l) != "" {
				l = indent + l
			}
			out = append(out, l)
		}
	}
	for _, name := range order {
		if !used[name] {
			return "", fmt.Errorf("fragment %s is never used", name)
		}
	}
	expanded := strings.Join(out, "\n")
	if i := strings.Index(expanded, "{{"); i >= 0 {
		line := expanded[strings.LastIndex(expanded[:i], "\n")+1:]
		line, _, _ = strings.Cut(line, "\n")
		return "", fmt.Errorf("placeholder not alone on its line, or inside a fragment: %q", strings.TrimSpace(line))
	}
	return expanded, nil
}

// placeholder names the fragment a line stands for, if it is a line of {{name}} alone.
func placeholder(line string) (string, bool) {
	name, ok := strings.CutPrefix(strings.TrimSpace(line), "{{")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(name, "}}")
}
