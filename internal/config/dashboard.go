package config

// DashboardConfig holds the settings of the embedded web dashboard.
type DashboardConfig struct {
	// WebappRoot, when set, is a directory served instead of the dashboard build embedded in the binary.
	WebappRoot string
}

var dashboardVars = []Var{
	{"WEBAPP_ROOT", "", "directory served as the dashboard instead of the copy embedded in the binary (development)", false,
		strVar(func(c *Config) *string { return &c.Dashboard.WebappRoot })},
}
