package ctl

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/queen-go/queen/client"
)

// proxyFlags locate queen-proxy's admin API: --proxy-server/$QUEEN_PROXY_URL and
// --admin-token/$QUEEN_PROXY_ADMIN_TOKEN, or the context's proxy-server and proxy-token-ref.
type proxyFlags struct{ server, token string }

func (a *app) proxyClient(p proxyFlags) (*client.Client, error) {
	t, err := a.target()
	if err != nil {
		return nil, err
	}
	server, token := t.proxyServer, t.proxyToken
	if p.server != "" {
		server = p.server
	}
	if p.token != "" {
		token = p.token
	}
	if server == "" {
		return nil, usageErr("no proxy configured: set --proxy-server, QUEEN_PROXY_URL, or the context's proxy-server")
	}
	if token == "" {
		return nil, usageErr("no admin token: set --admin-token, QUEEN_PROXY_ADMIN_TOKEN, or the context's proxy-token-ref")
	}
	return a.newClient(server, token, t.insecure)
}

func (a *app) proxyCmd() *cobra.Command {
	var p proxyFlags
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Administer queen-proxy: plans, tenants (clusters), API keys, sessions",
		Long: `Talk to queen-proxy's admin API (/_proxy/admin/*, bearer QUEEN_PROXY_ADMIN_TOKEN). The proxy
exposes creation, update and revocation only: it has no listing routes.`,
		Example: `  export QUEEN_PROXY_URL=http://proxy:6634 QUEEN_PROXY_ADMIN_TOKEN=…
  queenctl proxy plans create starter --request-rate 100 --message-rate 5000 --feature-traces
  queenctl proxy tenants create acme --host acme.queen.example --upstream http://10.0.0.5:6632 --plan starter
  queenctl proxy keys create acme --name ci --roles read-write
  queenctl proxy keys revoke 42`,
	}
	cmd.PersistentFlags().StringVar(&p.server, "proxy-server", "", "queen-proxy URL (env QUEEN_PROXY_URL)")
	cmd.PersistentFlags().StringVar(&p.token, "admin-token", "", "proxy admin token (env QUEEN_PROXY_ADMIN_TOKEN)")
	send := func(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
		c, err := a.proxyClient(p)
		if err != nil {
			return nil, err
		}
		return c.Do(ctx, method, path, nil, body)
	}
	idCols := []column{{"ID", "id", false}, {"NAME", "name", false}}
	idName := func(r map[string]any) string { return str(r["id"]) }

	// plans
	plans := &cobra.Command{Use: "plans", Aliases: []string{"plan"}, Short: "Create plans (limits and features of tenants)",
		Example: "  queenctl proxy plans create starter --max-batch-items 10000 --request-rate 100"}
	var plan struct {
		MaxPayloadBytes, MaxBatchItems, RequestRate, RequestBurst, MessageRate, MessageBurst, ParkedSlots int64
		MonthlyMessageQuota, StorageQuotaBytes, MaxQueues, MaxPartitionsPerQueue, MaxRetentionSeconds     int64
		FeatureStreams, FeatureTraces, FeatureOperator                                                    bool
	}
	planCreate := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create a plan (0 = unlimited for every limit)",
		Example: "  queenctl proxy plans create pro --max-payload-bytes 1048576 --message-rate 20000 --feature-streams --feature-traces",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{"name": args[0], "maxPayloadBytes": plan.MaxPayloadBytes, "maxBatchItems": plan.MaxBatchItems,
				"requestRate": plan.RequestRate, "requestBurst": plan.RequestBurst, "messageRate": plan.MessageRate,
				"messageBurst": plan.MessageBurst, "parkedSlots": plan.ParkedSlots, "monthlyMessageQuota": plan.MonthlyMessageQuota,
				"storageQuotaBytes": plan.StorageQuotaBytes, "maxQueues": plan.MaxQueues, "maxPartitionsPerQueue": plan.MaxPartitionsPerQueue,
				"maxRetentionSeconds": plan.MaxRetentionSeconds, "featureStreams": plan.FeatureStreams,
				"featureTraces": plan.FeatureTraces, "featureOperator": plan.FeatureOperator}
			raw, err := send(cmd.Context(), http.MethodPost, "/_proxy/admin/plans", body)
			if err != nil {
				return err
			}
			return a.print(view{data: raw, columns: idCols, name: func(r map[string]any) string { return "plan/" + str(r["name"]) }})
		},
	}
	pf := planCreate.Flags()
	for _, f := range []struct {
		p    *int64
		name string
		help string
	}{
		{&plan.MaxPayloadBytes, "max-payload-bytes", "largest pushed payload"},
		{&plan.MaxBatchItems, "max-batch-items", "most items in one push"},
		{&plan.RequestRate, "request-rate", "requests per second"},
		{&plan.RequestBurst, "request-burst", "request bucket capacity"},
		{&plan.MessageRate, "message-rate", "pushed messages per second"},
		{&plan.MessageBurst, "message-burst", "message bucket capacity"},
		{&plan.ParkedSlots, "parked-slots", "concurrent long-poll pops"},
		{&plan.MonthlyMessageQuota, "monthly-messages", "messages per calendar month"},
		{&plan.StorageQuotaBytes, "storage-bytes", "stored payload bytes"},
		{&plan.MaxQueues, "max-queues", "queues"},
		{&plan.MaxPartitionsPerQueue, "max-partitions-per-queue", "partitions per queue"},
		{&plan.MaxRetentionSeconds, "max-retention-seconds", "ceiling of retention options"},
	} {
		pf.Int64Var(f.p, f.name, 0, f.help+" (0 = unlimited)")
	}
	pf.BoolVar(&plan.FeatureStreams, "feature-streams", false, "allow /streams/*")
	pf.BoolVar(&plan.FeatureTraces, "feature-traces", false, "allow /api/v1/traces*")
	pf.BoolVar(&plan.FeatureOperator, "feature-operator", false, "allow maintenance and stats routes")
	plans.AddCommand(planCreate)

	// tenants (clusters)
	tenants := &cobra.Command{Use: "tenants", Aliases: []string{"tenant", "clusters", "cluster"},
		Short:   "Create and update tenant clusters",
		Example: "  queenctl proxy tenants create acme --host acme.queen.example --upstream http://10.0.0.5:6632 --plan starter"}
	var hosts []string
	var upstream, planName, state string
	var hold bool
	tCreate := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create a tenant cluster routed by Host to its broker",
		Example: "  queenctl proxy tenants create acme --host acme.queen.example --upstream http://10.0.0.5:6632 --plan starter",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(hosts) == 0 || upstream == "" || planName == "" {
				return usageErr("--host, --upstream and --plan are required")
			}
			raw, err := send(cmd.Context(), http.MethodPost, "/_proxy/admin/clusters", map[string]any{"name": args[0],
				"hosts": hosts, "upstreamUrl": upstream, "plan": planName, "state": state, "billingHold": hold})
			if err != nil {
				return err
			}
			return a.print(view{data: raw, columns: idCols, name: func(r map[string]any) string { return "tenant/" + str(r["name"]) }})
		},
	}
	tCreate.Flags().StringArrayVar(&hosts, "host", nil, "Host header that selects the tenant (repeatable)")
	tCreate.Flags().StringVar(&upstream, "upstream", "", "the tenant's broker URL")
	tCreate.Flags().StringVar(&planName, "plan", "", "plan name")
	tCreate.Flags().StringVar(&state, "state", "", "active | suspended | deleting (default active)")
	tCreate.Flags().BoolVar(&hold, "billing-hold", false, "block pushes")
	var uUpstream, uPlan, uState string
	var uHold bool
	var uStorage int64
	tUpdate := &cobra.Command{
		Use:     "update NAME",
		Short:   "Change a tenant's upstream, plan, state, billing hold or storage counter",
		Example: "  queenctl proxy tenants update acme --state suspended\n  queenctl proxy tenants update acme --plan pro --billing-hold=false",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{}
			f := cmd.Flags()
			if f.Changed("upstream") {
				body["upstreamUrl"] = uUpstream
			}
			if f.Changed("plan") {
				body["plan"] = uPlan
			}
			if f.Changed("state") {
				body["state"] = uState
			}
			if f.Changed("billing-hold") {
				body["billingHold"] = uHold
			}
			if f.Changed("storage-bytes-used") {
				body["storageBytesUsed"] = uStorage
			}
			if len(body) == 0 {
				return usageErr("nothing to update: give --upstream, --plan, --state, --billing-hold or --storage-bytes-used")
			}
			raw, err := send(cmd.Context(), http.MethodPatch, "/_proxy/admin/clusters/"+url.PathEscape(args[0]), body)
			if err != nil {
				return err
			}
			return a.print(view{data: raw, columns: []column{{"NAME", "name", false}, {"UPDATED", "updated", false}},
				name: func(r map[string]any) string { return "tenant/" + str(r["name"]) }})
		},
	}
	tUpdate.Flags().StringVar(&uUpstream, "upstream", "", "new broker URL")
	tUpdate.Flags().StringVar(&uPlan, "plan", "", "new plan")
	tUpdate.Flags().StringVar(&uState, "state", "", "active | suspended | deleting")
	tUpdate.Flags().BoolVar(&uHold, "billing-hold", false, "block (true) or allow (false) pushes")
	tUpdate.Flags().Int64Var(&uStorage, "storage-bytes-used", 0, "correct the stored-bytes counter")
	month := regexp.MustCompile(`^\d{4}-\d{2}$`)
	var msgs int64
	tUsage := &cobra.Command{
		Use:     "set-usage NAME YYYY-MM --messages N",
		Short:   "Correct a tenant's message counter for a month",
		Example: "  queenctl proxy tenants set-usage acme 2026-12 --messages 0",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !month.MatchString(args[1]) {
				return usageErr("month must be YYYY-MM, got %q", args[1])
			}
			if !cmd.Flags().Changed("messages") || msgs < 0 {
				return usageErr("--messages N (N ≥ 0) is required")
			}
			raw, err := send(cmd.Context(), http.MethodPut, "/_proxy/admin/clusters/"+url.PathEscape(args[0])+"/usage/"+args[1],
				map[string]any{"messages": msgs})
			if err != nil {
				return err
			}
			return a.print(view{data: raw, columns: []column{{"MONTH", "month", false}, {"MESSAGES", "messages", false}}})
		},
	}
	tUsage.Flags().Int64Var(&msgs, "messages", 0, "the month's message count")
	tenants.AddCommand(tCreate, tUpdate, tUsage)

	// keys and sessions
	keys := &cobra.Command{Use: "keys", Aliases: []string{"key", "api-keys"}, Short: "Create and revoke tenant API keys",
		Example: "  queenctl proxy keys create acme --name ci --roles read-write\n  queenctl proxy keys revoke 42 --yes"}
	var keyName string
	var roles []string
	kCreate := &cobra.Command{
		Use:     "create TENANT",
		Short:   "Create an API key; its secret is printed once",
		Example: "  queenctl proxy keys create acme --name ci --roles read-write -o jsonpath='{.key}'",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := send(cmd.Context(), http.MethodPost, "/_proxy/admin/clusters/"+url.PathEscape(args[0])+"/keys",
				map[string]any{"name": keyName, "roles": roles})
			if err != nil {
				return err
			}
			return a.print(view{data: raw, columns: []column{{"ID", "id", false}, {"KEY", "key", false}, {"ROLES", "roles", false}}, name: idName})
		},
	}
	kCreate.Flags().StringVar(&keyName, "name", "", "label of the key")
	kCreate.Flags().StringSliceVar(&roles, "roles", nil, "admin, read-write, read-only, write-only (comma separated)")
	revoke := func(kind, path string) *cobra.Command {
		var yes bool
		c := &cobra.Command{
			Use:     "revoke ID",
			Aliases: []string{"delete", "rm"},
			Short:   "Revoke a " + kind + " (effective on its next request)",
			Example: "  queenctl proxy " + kind + "s revoke 42 --yes",
			Args:    cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := a.confirm(yes, "revoke "+kind+" "+args[0]); err != nil {
					return err
				}
				raw, err := send(cmd.Context(), http.MethodDelete, path+url.PathEscape(args[0]), nil)
				if err != nil {
					return err
				}
				return a.print(view{data: raw, columns: []column{{"ID", "id", false}, {"REVOKED", "revoked", false}}, name: idName})
			},
		}
		c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
		return c
	}
	keys.AddCommand(kCreate, revoke("key", "/_proxy/admin/keys/"))
	sessions := &cobra.Command{Use: "sessions", Aliases: []string{"session"}, Short: "Create and revoke dashboard sessions",
		Example: "  queenctl proxy sessions create acme --subject alice --roles read-only --ttl 3600"}
	var subject string
	var sRoles []string
	var ttl int64
	sCreate := &cobra.Command{
		Use:     "create TENANT",
		Short:   "Create a dashboard session; its token is printed once",
		Example: "  queenctl proxy sessions create acme --subject alice --roles read-only --ttl 3600",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := send(cmd.Context(), http.MethodPost, "/_proxy/admin/clusters/"+url.PathEscape(args[0])+"/sessions",
				map[string]any{"subject": subject, "roles": sRoles, "ttlSeconds": ttl})
			if err != nil {
				return err
			}
			return a.print(view{data: raw, columns: []column{{"ID", "id", false}, {"TOKEN", "token", false}, {"EXPIRES", "expiresAt", false}}, name: idName})
		},
	}
	sCreate.Flags().StringVar(&subject, "subject", "", "who the session is for")
	sCreate.Flags().StringSliceVar(&sRoles, "roles", nil, "roles (comma separated)")
	sCreate.Flags().Int64Var(&ttl, "ttl", 0, "lifetime in seconds (default 12 h)")
	sessions.AddCommand(sCreate, revoke("session", "/_proxy/admin/sessions/"))
	cmd.AddCommand(plans, tenants, keys, sessions)
	return cmd
}
