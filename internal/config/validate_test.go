package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	abs := t.TempDir()
	tests := []struct {
		name   string
		modify func(c *Config)
		want   []string // each must appear in the error; none means valid
	}{
		{name: "default", modify: func(c *Config) {}},
		{
			name: "workdirs",
			modify: func(c *Config) {
				c.Workdirs = []Workdir{
					{Alias: "a", Path: abs, Hardlinks: "allow", CrossMounts: true},
					{Alias: "0-9_z", Path: filepath.Join(abs, "x"), ReadOnly: true, Hardlinks: "refuse"},
					{Alias: strings.Repeat("x", 64), Path: abs},
				}
			},
		},
		{
			name: "hardlinks",
			modify: func(c *Config) {
				c.Workdirs = []Workdir{{Alias: "a", Path: abs, Hardlinks: "yes"}}
			},
			want: []string{`workdirs[0].hardlinks: "yes" is not one of refuse, allow`},
		},
		{
			name: "unexpanded and relative paths",
			modify: func(c *Config) {
				c.Workdirs = []Workdir{{Alias: "a", Path: "~/notes"}, {Alias: "b", Path: "notes"}}
			},
			want: []string{`workdirs[0].path: "~/notes" is not an absolute path`, `workdirs[1].path: "notes" is not an absolute path`},
		},
		{
			name: "duplicates",
			modify: func(c *Config) {
				c.Workdirs = []Workdir{{Alias: "a", Path: abs}, {Alias: "b", Path: abs}, {Alias: "a", Path: abs}}
			},
			want: []string{`workdirs[2].alias: duplicate alias "a" (also workdirs[0])`},
		},
		{
			name:   "zero limits",
			modify: func(c *Config) { c.Limits = Limits{} },
			want: []string{
				"limits.max_read_bytes: 0 is out of range",
				"limits.max_write_bytes: 0 is out of range",
				"limits.max_list_entries: 0 is out of range",
				"limits.max_search_matches: 0 is out of range",
				"limits.max_search_bytes: 0 is out of range",
				"limits.max_search_file_bytes: 0 is out of range",
			},
		},
		{
			name:   "allow_paths in the one glob dialect",
			modify: func(c *Config) { c.Policy.AllowPaths = []string{"src/{a,b}/**", "**/*.md", `\*.txt`} },
		},
		{
			name:   "bad allow_paths",
			modify: func(c *Config) { c.Policy.AllowPaths = []string{"/abs/**", "src/[", ""} },
			want: []string{`policy.allow_paths[0]: "/abs/**" is not a valid glob`, `policy.allow_paths[1]: "src/[" is not a valid glob`,
				`policy.allow_paths[2]: "" is not a valid glob`},
		},
		{
			name:   "approve_in_client alone",
			modify: func(c *Config) { c.Policy.ApproveInClient = true },
		},
		{
			name:   "confirm_in_person alone",
			modify: func(c *Config) { c.Policy.ConfirmInPerson = true },
		},
		{
			name:   "confirm_in_person excludes approve_in_client",
			modify: func(c *Config) { c.Policy.ConfirmInPerson, c.Policy.ApproveInClient = true, true },
			want:   []string{"policy.approve_in_client: true lets an MCP client's prompt decide, which confirm_in_person = true forbids"},
		},
		{
			name:   "empty listen",
			modify: func(c *Config) { c.Server.Listen = "" },
			want:   []string{`server.listen: "" is not host:port`},
		},
		{
			name: "connection limits at their bounds",
			modify: func(c *Config) {
				c.Server.MaxConnections, c.Server.MaxConnectionsPerPeer = 16, 16
				c.Audit.MaxTotalBytes, c.Audit.RefusalIntervalSeconds = 2*c.Audit.MaxFileBytes, 3600
			},
		},
		{
			name: "connection and audit limits past their bounds",
			modify: func(c *Config) {
				c.Server.MaxConnections, c.Server.MaxConnectionsPerPeer = 15, 16
				c.Audit.MaxTotalBytes, c.Audit.RefusalIntervalSeconds = 2*c.Audit.MaxFileBytes-1, 3601
			},
			want: []string{
				"server.max_connections: 15 is out of range: must be 16 to 65536",
				"server.max_connections_per_peer: 16 is out of range: must be 1 to 15",
				"audit.max_total_bytes: 134217727 is out of range: must be 134217728 to 1099511627776",
				"audit.refusal_interval_seconds: 3601 is out of range: must be 1 to 3600",
			},
		},
		{
			name: "connection and audit limits far past their bounds",
			modify: func(c *Config) {
				c.Server.MaxConnections, c.Server.MaxConnectionsPerPeer = 1<<30, -1
				c.Audit.MaxTotalBytes, c.Audit.RefusalIntervalSeconds = 1<<62, -5
			},
			want: []string{
				"server.max_connections: 1073741824 is out of range",
				"server.max_connections_per_peer: -1 is out of range",
				"audit.max_total_bytes: 4611686018427387904 is out of range",
				"audit.refusal_interval_seconds: -5 is out of range",
			},
		},
		{
			name:   "audit too small",
			modify: func(c *Config) { c.Audit.MaxFileBytes = 1000 },
			want:   []string{"audit.max_file_bytes: 1000 is out of range: must be 65536 to 4294967296"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.modify(c)
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate succeeded; want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}
