package auth

import (
	"slices"
	"strings"
)

// roleSet maps each access level to the role names that pass it. Levels are sets, not a ladder
// (decisions.md "Access levels"): write-only passes produce and nothing else.
type roleSet map[Access][]string

func newRoleSet(cfg Options) roleSet {
	admin, rw, ro, wo := cfg.RoleAdmin, cfg.RoleReadWrite, cfg.RoleReadOnly, cfg.RoleWriteOnly
	return roleSet{
		Produce: nonEmpty(admin, rw, wo),
		Consume: nonEmpty(admin, rw),
		Read:    nonEmpty(admin, rw, ro),
		Admin:   nonEmpty(admin),
	}
}

func nonEmpty(names ...string) []string {
	return slices.DeleteFunc(names, func(s string) bool { return s == "" })
}

// allows reports whether any of roles passes level. Public passes without roles; an unknown level
// passes nobody.
func (rs roleSet) allows(level Access, roles []string) bool {
	if level == Public {
		return true
	}
	for _, r := range roles {
		if slices.Contains(rs[level], r) {
			return true
		}
	}
	return false
}

// rolesFrom collects the roles of a token from the string claim and the array claim. Either claim
// may hold a string or an array of strings; other values are ignored.
func rolesFrom(claims map[string]any, stringClaim, arrayClaim string) []string {
	var out []string
	add := func(v any) {
		switch v := v.(type) {
		case string:
			if v != "" {
				out = append(out, v)
			}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok && s != "" {
					out = append(out, s)
				}
			}
		}
	}
	if stringClaim != "" {
		add(claims[stringClaim])
	}
	if arrayClaim != "" && arrayClaim != stringClaim {
		add(claims[arrayClaim])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// skipList is JWT_SKIP_PATHS: exact matches, plus prefix matches for entries longer than one
// character that end in "/" (so "/" alone matches only the root).
type skipList []string

func (l skipList) match(path string) bool {
	for _, p := range l {
		if path == p || (len(p) > 1 && strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			return true
		}
	}
	return false
}
