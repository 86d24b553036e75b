package ctl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/internal/setting"
)

// configFile is the contexts file (YAML).
type configFile struct {
	CurrentContext string        `yaml:"current-context,omitempty" json:"current-context,omitempty"`
	Contexts       []contextSpec `yaml:"contexts" json:"contexts"`
	path           string
}

// contextSpec is one named target. TokenRef says where the token lives: "env" ($QUEEN_TOKEN),
// "file://<path>", "literal:<token>" or a bare token.
type contextSpec struct {
	Name     string `yaml:"name" json:"name"`
	Server   string `yaml:"server,omitempty" json:"server,omitempty"`
	TokenRef string `yaml:"token-ref,omitempty" json:"token-ref,omitempty"`
	Insecure bool   `yaml:"insecure,omitempty" json:"insecure,omitempty"`
	// Proxy admin API of queen-proxy (queenctl proxy …).
	ProxyServer   string `yaml:"proxy-server,omitempty" json:"proxy-server,omitempty"`
	ProxyTokenRef string `yaml:"proxy-token-ref,omitempty" json:"proxy-token-ref,omitempty"`
}

// UnmarshalYAML reads a context with its switch (insecure) read as every binary reads its switches
// (internal/setting): 1/0, true/false, yes/no, on/off in any case, and an error naming it for
// anything else, where YAML alone would refuse 1 and read other spellings by its own rules.
func (c *contextSpec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k, v := n.Content[i], n.Content[i+1]; k.Value == "insecure" && v.Kind == yaml.ScalarNode {
				b, err := setting.ParseBool("insecure", v.Value)
				if err != nil {
					return fmt.Errorf("line %d: %w", v.Line, err)
				}
				v.Tag, v.Value = "!!bool", strconv.FormatBool(b)
			}
		}
	}
	type plain contextSpec // without this method
	return n.Decode((*plain)(c))
}

func (a *app) configPath() string {
	if a.g.config != "" {
		return a.g.config
	}
	if p := a.env.Getenv("QUEENCTL_CONFIG"); p != "" {
		return p
	}
	dir := a.env.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := a.env.Getenv("HOME")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "queenctl", "config.yaml")
}

// loadConfig reads the contexts file; a missing file is an empty configuration.
func (a *app) loadConfig() (*configFile, error) {
	if a.cfg != nil {
		return a.cfg, nil
	}
	path := a.configPath()
	cf := &configFile{path: path}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, usageErr("read config %s: %v", path, err)
	default:
		if err := yaml.Unmarshal(b, cf); err != nil {
			return nil, usageErr("parse config %s: %v", path, err)
		}
	}
	a.cfg = cf
	return cf, nil
}

// save writes the file atomically (temp file + rename), mode 0600 in a 0700 directory, because it
// may hold tokens.
func (cf *configFile) save() error {
	if err := os.MkdirAll(filepath.Dir(cf.path), 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	b, err := yaml.Marshal(cf)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	tmp := cf.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.Rename(tmp, cf.path); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

func (cf *configFile) find(name string) *contextSpec {
	for i := range cf.Contexts {
		if cf.Contexts[i].Name == name {
			return &cf.Contexts[i]
		}
	}
	return nil
}

// resolveRef turns a token reference into the token.
func (a *app) resolveRef(ref string) (string, error) {
	switch {
	case ref == "":
		return "", nil
	case ref == "env":
		return a.env.Getenv("QUEEN_TOKEN"), nil
	case strings.HasPrefix(ref, "file://"):
		b, err := os.ReadFile(strings.TrimPrefix(ref, "file://"))
		if err != nil {
			return "", usageErr("token file: %v", err)
		}
		return strings.TrimSpace(string(b)), nil
	case strings.HasPrefix(ref, "literal:"):
		return strings.TrimPrefix(ref, "literal:"), nil
	default:
		return ref, nil
	}
}

type resolved struct {
	server, token           string
	insecure                bool
	proxyServer, proxyToken string
	context                 string
}

// target applies the resolution order: current-context → $QUEEN_CONTEXT → --context selects the
// context; then $QUEEN_SERVER (or its alias $QUEEN_URL) → --server; then $QUEEN_TOKEN → --token.
func (a *app) target() (resolved, error) {
	var r resolved
	cf, err := a.loadConfig()
	if err != nil {
		return r, err
	}
	name := cf.CurrentContext
	explicit := false
	if v := a.env.Getenv("QUEEN_CONTEXT"); v != "" {
		name, explicit = v, true
	}
	if a.g.context != "" {
		name, explicit = a.g.context, true
	}
	if name != "" {
		c := cf.find(name)
		switch {
		case c == nil && explicit:
			return r, usageErr("context %q not found in %s", name, cf.path)
		case c != nil:
			r.context, r.server, r.insecure = c.Name, c.Server, c.Insecure
			if r.token, err = a.resolveRef(c.TokenRef); err != nil {
				return r, err
			}
			r.proxyServer = c.ProxyServer
			if r.proxyToken, err = a.resolveRef(c.ProxyTokenRef); err != nil {
				return r, err
			}
		}
	}
	if v := client.ServerFrom(a.env.Getenv); v != "" {
		r.server = v
	}
	if a.g.server != "" {
		r.server = a.g.server
	}
	if v := a.env.Getenv("QUEEN_TOKEN"); v != "" {
		r.token = v
	}
	if a.g.token != "" {
		r.token = a.g.token
	}
	if v := a.env.Getenv("QUEEN_PROXY_URL"); v != "" {
		r.proxyServer = v
	}
	if v := a.env.Getenv("QUEEN_PROXY_ADMIN_TOKEN"); v != "" {
		r.proxyToken = v
	}
	return r, nil
}

func (a *app) completeContexts(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	cf, err := a.loadConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names := make([]string, len(cf.Contexts))
	for i, c := range cf.Contexts {
		names[i] = c.Name
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Manage contexts in the config file (no server involved)",
		Example: `  queenctl config set-context prod --server https://queen.example.com --token-ref env
  queenctl config use-context prod
  queenctl config get-contexts`,
	}
	viewCmd := &cobra.Command{
		Use:     "view",
		Short:   "Print the config file (tokens are masked)",
		Example: `  queenctl config view -o yaml`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cf, err := a.loadConfig()
			if err != nil {
				return err
			}
			masked := *cf
			masked.Contexts = make([]contextSpec, len(cf.Contexts))
			for i, c := range cf.Contexts {
				c.TokenRef, c.ProxyTokenRef = maskRef(c.TokenRef), maskRef(c.ProxyTokenRef)
				masked.Contexts[i] = c
			}
			return a.print(view{data: masked, format: "yaml"})
		},
	}
	current := &cobra.Command{
		Use:     "current-context",
		Short:   "Print the current context's name (exit 4 when none is set)",
		Example: `  queenctl config current-context`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cf, err := a.loadConfig()
			if err != nil {
				return err
			}
			if cf.CurrentContext == "" {
				return errNoop
			}
			fmt.Fprintln(a.env.Stdout, cf.CurrentContext)
			return nil
		},
	}
	list := &cobra.Command{
		Use:     "get-contexts",
		Aliases: []string{"list"},
		Short:   "List the contexts",
		Example: `  queenctl config get-contexts -o name`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cf, err := a.loadConfig()
			if err != nil {
				return err
			}
			rows := make([]map[string]any, len(cf.Contexts))
			for i, c := range cf.Contexts {
				cur := ""
				if c.Name == cf.CurrentContext {
					cur = "*"
				}
				auth := "none"
				if c.TokenRef != "" {
					auth = refKind(c.TokenRef)
				}
				rows[i] = map[string]any{"current": cur, "name": c.Name, "server": c.Server, "auth": auth, "insecure": c.Insecure,
					"proxyServer": c.ProxyServer}
			}
			return a.print(view{data: rows, columns: []column{{"CURRENT", "current", false}, {"NAME", "name", false},
				{"SERVER", "server", false}, {"AUTH", "auth", false}, {"INSECURE", "insecure", false}, {"PROXY", "proxyServer", true}},
				name: func(r map[string]any) string { return str(r["name"]) }})
		},
	}
	var set contextSpec
	var token string
	setCmd := &cobra.Command{
		Use:   "set-context NAME",
		Short: "Create or update a context (and make it current when none is)",
		Example: `  queenctl config set-context local --server http://localhost:6632
  queenctl config set-context prod --server https://queen.example.com --token-ref file:///run/secrets/queen
  queenctl config set-context tenant --server https://acme.queen.example --token qk_…`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cf, err := a.loadConfig()
			if err != nil {
				return err
			}
			if token != "" && cmd.Flags().Changed("token-ref") {
				return usageErr("--token and --token-ref are exclusive")
			}
			c := cf.find(args[0])
			if c == nil {
				cf.Contexts = append(cf.Contexts, contextSpec{Name: args[0]})
				c = &cf.Contexts[len(cf.Contexts)-1]
			}
			f := cmd.Flags()
			if f.Changed("server") {
				c.Server = set.Server
			}
			if token != "" {
				c.TokenRef = "literal:" + token
			}
			if f.Changed("token-ref") {
				c.TokenRef = set.TokenRef
			}
			if f.Changed("insecure") {
				c.Insecure = set.Insecure
			}
			if f.Changed("proxy-server") {
				c.ProxyServer = set.ProxyServer
			}
			if f.Changed("proxy-token-ref") {
				c.ProxyTokenRef = set.ProxyTokenRef
			}
			if cf.CurrentContext == "" {
				cf.CurrentContext = c.Name
			}
			if err := cf.save(); err != nil {
				return err
			}
			a.info("context %q saved in %s", c.Name, cf.path)
			return nil
		},
	}
	// These flags are local to set-context; the persistent --server/--token are for talking to a
	// broker, so set-context gets its own names bound to the context being written.
	sf := setCmd.Flags()
	sf.StringVar(&set.Server, "server", "", "broker URL of the context")
	sf.StringVar(&token, "token", "", "store this token literally in the file")
	sf.StringVar(&set.TokenRef, "token-ref", "", "token reference: env | file:///path | literal:<token>")
	sf.BoolVar(&set.Insecure, "insecure", false, "skip TLS verification for this context")
	sf.StringVar(&set.ProxyServer, "proxy-server", "", "queen-proxy URL for 'queenctl proxy' commands")
	sf.StringVar(&set.ProxyTokenRef, "proxy-token-ref", "", "queen-proxy admin token reference (same forms as --token-ref)")
	use := a.contextCmd("use-context NAME", "Make a context current", `  queenctl config use-context prod`,
		func(cf *configFile, name string) { cf.CurrentContext = name })
	del := a.contextCmd("delete-context NAME", "Remove a context", `  queenctl config delete-context old`,
		func(cf *configFile, name string) {
			cf.Contexts = slices.DeleteFunc(cf.Contexts, func(c contextSpec) bool { return c.Name == name })
			if cf.CurrentContext == name {
				cf.CurrentContext = ""
			}
		})
	cmd.AddCommand(viewCmd, current, list, setCmd, use, del)
	return cmd
}

// contextCmd is a config command that changes one named context of the file: load, refuse an
// unknown name (exit 5), edit, save.
func (a *app) contextCmd(use, short, example string, edit func(cf *configFile, name string)) *cobra.Command {
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Example:           example,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeContexts,
		RunE: func(_ *cobra.Command, args []string) error {
			cf, err := a.loadConfig()
			if err != nil {
				return err
			}
			if cf.find(args[0]) == nil {
				return &exitError{code: ExitNotFound, err: fmt.Errorf("context %q not found", args[0])}
			}
			edit(cf, args[0])
			return cf.save()
		},
	}
}

func refKind(ref string) string {
	switch {
	case ref == "env":
		return "env"
	case strings.HasPrefix(ref, "file://"):
		return "file"
	default:
		return "literal"
	}
}

func maskRef(ref string) string {
	if ref == "" || ref == "env" || strings.HasPrefix(ref, "file://") {
		return ref
	}
	return "literal:****"
}
