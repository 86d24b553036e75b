package httpapi

import (
	"bytes"
	"fmt"
	"strings"
)

//go:generate go run ./refgen -o ../../docs/reference.md

// Reference renders docs/reference.md, the route table with each route's access level, from
// [Routes]. TestReferenceIsCurrent fails when the committed file differs; `make gen` rewrites it.
func Reference() []byte {
	var b bytes.Buffer
	b.WriteString(`# HTTP API reference

<!-- Generated from httpapi.Routes by ` + "`make gen`" + ` (go generate ./internal/httpapi). DO NOT EDIT. -->

Every route the broker registers, with the access level it requires when ` + "`JWT_ENABLED=true`" + `.
With JWT off every route is open. ` + "`OPTIONS`" + ` on any path (CORS pre-flight) never needs a token, and a
path listed in ` + "`JWT_SKIP_PATHS`" + ` bypasses the check whatever its level. Any other path answers a JSON
` + "`404`" + ` for ` + "`/api/*`" + ` and for every non-GET method, without authentication.

Levels are role sets, not a ladder (role names are configurable with ` + "`JWT_ROLE_*`" + `; roles are read from the
` + "`role`" + ` string claim and the ` + "`roles`" + ` array claim):

| Access | Roles that pass |
|---|---|
| public | anyone, no token needed |
| produce | ` + "`admin`, `read-write`, `write-only`" + ` |
| consume | ` + "`admin`, `read-write`" + ` |
| read | ` + "`admin`, `read-write`, `read-only`" + ` |
| admin | ` + "`admin`" + ` |

A missing or invalid token is ` + "`401`" + `; a valid token whose roles do not pass is ` + "`403 {\"error\":\"Insufficient permissions\"}`" + `.

## Routes

| Method | Path | Access | Purpose |
|---|---|---|---|
`)
	for _, rt := range Routes {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", rt.Method, rt.Pattern, rt.Access, mdCell(rt.Doc))
	}
	fmt.Fprintf(&b, "\n%d routes.\n", len(Routes))
	return b.Bytes()
}

// mdCell keeps a route's doc line inside its table cell.
func mdCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
