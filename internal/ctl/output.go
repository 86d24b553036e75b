package ctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/theory/jsonpath"
	"go.yaml.in/yaml/v3"
)

// column is one table column: a header and a dot path into a row ("messages.pending").
type column struct {
	header string
	path   string
	wide   bool // only with -o wide
}

// view is what a command prints. data is printed as-is by json/yaml/jsonpath; table, wide and name
// read the rows at items (a dot path into data, "" when data itself is the list; a single object
// is one row).
type view struct {
	data    any
	items   string
	columns []column
	name    func(row map[string]any) string
	format  string // the default when -o is not given (overrides table/json by TTY)
	rows    any    // when set, table, wide, name and ndjson show these rows instead of data's
	// toRows, when set (and rows is not), makes the rows from the normalised data: for commands whose
	// data is fetched again under --watch.
	toRows func(data any) []any
}

// outputFormat is the effective -o value.
func (a *app) outputFormat(def string) string {
	switch {
	case a.g.output != "":
		return a.g.output
	case def != "":
		return def
	case a.env.StdoutTTY:
		return "table"
	default:
		return "json"
	}
}

// normalize turns any value into plain JSON types (maps, slices, json.Number), so that tables,
// jsonpath and yaml see the same thing the json output shows.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

func (a *app) print(v view) error {
	format := a.outputFormat(v.format)
	data, err := normalize(v.data)
	if err != nil {
		return err
	}
	rows := func() []any { return rowsOf(data, v.items) }
	if v.rows == nil && v.toRows != nil {
		rows = func() []any { return v.toRows(data) }
	}
	if v.rows != nil {
		r, err := normalize(v.rows)
		if err != nil {
			return err
		}
		rows = func() []any { return rowsOf(r, "") }
	}
	w := a.env.Stdout
	switch {
	case format == "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(data)
	case format == "ndjson" || format == "jsonl":
		for _, r := range rows() {
			if err := writeCompact(w, r); err != nil {
				return err
			}
		}
		return nil
	case format == "yaml":
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(yamlSafe(data)); err != nil {
			return err
		}
		return enc.Close()
	case format == "name":
		last := ""
		for _, r := range rows() {
			m, _ := r.(map[string]any)
			n := ""
			if v.name != nil {
				n = v.name(m)
			} else if len(v.columns) > 0 {
				n = cell(m, v.columns[0].path)
			}
			if n == last { // several rows of one resource (one per consumer group) name it once
				continue
			}
			last = n
			fmt.Fprintln(w, n)
		}
		return nil
	case strings.HasPrefix(format, "jsonpath=") || strings.HasPrefix(format, "json-path="):
		_, expr, _ := strings.Cut(format, "=")
		return writeJSONPath(w, data, expr)
	case format == "table" || format == "wide":
		if len(v.columns) == 0 { // no tabular form: fall back to YAML, which reads well in a terminal
			enc := yaml.NewEncoder(w)
			enc.SetIndent(2)
			if err := enc.Encode(yamlSafe(data)); err != nil {
				return err
			}
			return enc.Close()
		}
		a.table(w, rows(), v.columns, format == "wide")
		return nil
	default:
		return usageErr("unknown output format %q (table, wide, json, yaml, name, ndjson, jsonpath=EXPR)", format)
	}
}

func writeCompact(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeJSONPath evaluates an RFC 9535 expression; the kubectl forms "{.items[*].name}" and
// ".items[*].name" are accepted too. Strings print raw, other values as compact JSON, one per line.
func writeJSONPath(w io.Writer, data any, expr string) error {
	expr = strings.TrimSpace(expr)
	expr = strings.TrimSuffix(strings.TrimPrefix(expr, "{"), "}")
	if !strings.HasPrefix(expr, "$") {
		if !strings.HasPrefix(expr, ".") && !strings.HasPrefix(expr, "[") {
			expr = "." + expr
		}
		expr = "$" + expr
	}
	p, err := jsonpath.Parse(expr)
	if err != nil {
		return usageErr("jsonpath: %v", err)
	}
	for _, n := range p.Select(data) {
		if s, ok := n.(string); ok {
			fmt.Fprintln(w, s)
			continue
		}
		if err := writeCompact(w, n); err != nil {
			return err
		}
	}
	return nil
}

// yamlSafe turns json.Number into int64/float64 so YAML prints numbers, not quoted strings.
func yamlSafe(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = yamlSafe(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = yamlSafe(x)
		}
		return out
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	default:
		return v
	}
}

func rowsOf(data any, items string) []any {
	v := data
	if items != "" {
		v = lookup(data, items)
	}
	switch t := v.(type) {
	case []any:
		return t
	case nil:
		return nil
	default:
		return []any{t}
	}
}

// lookup follows a dot path through maps.
func lookup(v any, path string) any {
	if path == "" || path == "." {
		return v
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func cell(row any, path string) string {
	return str(lookup(row, path))
}

// str renders a cell: nil as empty, scalars plainly, objects as compact JSON.
func str(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case int:
		return strconv.Itoa(t)
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

// table renders rows with go-pretty: no borders, kubectl-like, each row cut to the terminal width
// and long cells (payloads, errors) capped so one column cannot push the others off screen.
func (a *app) table(w io.Writer, rows []any, cols []column, wide bool) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	style := table.StyleDefault
	style.Options = table.OptionsNoBordersAndSeparators
	style.Box.PaddingLeft = ""
	style.Box.PaddingRight = "  "
	style.Format.Header = text.FormatDefault
	t.SetStyle(style)
	var shown []column
	for _, c := range cols {
		if !c.wide || wide {
			shown = append(shown, c)
		}
	}
	if !a.g.noHeaders {
		h := make(table.Row, len(shown))
		for i, c := range shown {
			h[i] = c.header
		}
		t.AppendHeader(h)
	}
	var cfgs []table.ColumnConfig
	for i, c := range shown {
		if slices.Contains([]string{"DATA", "ERROR", "PAYLOAD"}, c.header) && !wide {
			cfgs = append(cfgs, table.ColumnConfig{Number: i + 1, WidthMax: 60, WidthMaxEnforcer: text.Trim})
		}
	}
	t.SetColumnConfigs(cfgs)
	for _, r := range rows {
		row := make(table.Row, len(shown))
		for i, c := range shown {
			row[i] = cell(r, c.path)
		}
		t.AppendRow(row)
	}
	if a.env.Width > 0 {
		t.SetAllowedRowLength(a.env.Width)
	}
	t.Render()
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func sortStrings(s []string) { slices.Sort(s) }
