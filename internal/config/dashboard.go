package config

// DashboardConfig holds the settings of the embedded web dashboard.
type DashboardConfig struct {
	// WebappRoot, when set, is a directory served instead of the dashboard build embedded in the binary.
	WebappRoot string
}
