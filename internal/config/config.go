// Package config loads and validates hostlink's config.toml.
//
// The file is decoded strictly: an unknown key is an error, so a misspelt
// setting cannot be silently ignored. Errors name the key and the line, as in
//
//	/home/ada/.config/hostlink/config.toml:7: unknown key "workdirs[1].paht"
//
// A key that is missing or zero takes its default; a value that is present
// but out of range is an error. defaults.toml (see DefaultTOML) documents
// every key.
package config

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
)

// Config is hostlink's configuration.
type Config struct {
	Workdirs []Workdir `toml:"workdirs"`
	Limits   Limits    `toml:"limits"`
	Server   Server    `toml:"server"`
	Audit    Audit     `toml:"audit"`
	Commands Commands  `toml:"commands"`
	Link     Link      `toml:"link"`
	Computer Computer  `toml:"computer"`
	Log      Log       `toml:"log"`
	Agents   Agents    `toml:"agents"`
	Policy   Policy    `toml:"policy"`
	// Companion: this hostlink as a runtime that companions connect to.
	Companion Companion `toml:"companion"`
	Update    Update    `toml:"update"`
	// Mesh: this machine as an executor on a hostlink mesh.
	Mesh Mesh `toml:"mesh"`
}

// Workdir is a directory that clients may work in, named by an alias.
type Workdir struct {
	Alias       string `toml:"alias"`     // required; [a-z0-9][a-z0-9_-]{0,63}, unique
	Path        string `toml:"path"`      // required; absolute and clean once loaded
	ReadOnly    bool   `toml:"read_only"` // refuse every mutation
	Description string `toml:"description"`
	// AgentMode is what agent tasks may do here: "disabled" (or unset),
	// "read-only" or "workspace-write" (see [agents]).
	AgentMode     string   `toml:"agent_mode"`
	AgentRuntimes []string `toml:"agent_runtimes"` // further limits agents.runtimes here
	// Hardlinks is "refuse" (or unset) or "allow": whether regular files
	// with more than one link may be read and edited here. Another name
	// of such a file may lie outside the workdir; trees such as pnpm
	// stores are made of them.
	Hardlinks string `toml:"hardlinks"`
	// CrossMounts lets recursive listings, searches and deletes enter
	// other file systems mounted below the workdir.
	CrossMounts bool `toml:"cross_mounts"`
}

// AllowHardlinks reports whether w lets files with several links be read.
func (w Workdir) AllowHardlinks() bool { return w.Hardlinks == "allow" }

// Limits bound the work a single request can cause.
type Limits struct {
	MaxReadBytes       int64 `toml:"max_read_bytes"`
	MaxWriteBytes      int64 `toml:"max_write_bytes"`
	MaxListEntries     int   `toml:"max_list_entries"`
	MaxSearchMatches   int   `toml:"max_search_matches"`
	MaxSearchBytes     int64 `toml:"max_search_bytes"`      // bytes scanned per search
	MaxSearchFileBytes int64 `toml:"max_search_file_bytes"` // larger files are skipped by search
}

// Server configures the Streamable HTTP listener (MCP and the console).
type Server struct {
	Listen string `toml:"listen"` // host:port; the host must be loopback
	// MaxConnections bounds open connections; MaxConnectionsPerPeer those
	// from one address (see package connlimit).
	MaxConnections        int `toml:"max_connections"`
	MaxConnectionsPerPeer int `toml:"max_connections_per_peer"`
}

// Audit configures the audit log.
type Audit struct {
	MaxFileBytes int64 `toml:"max_file_bytes"` // size at which audit.log rotates
	// MaxTotalBytes bounds the audit directory: the oldest rotated files
	// are removed past it, under a signed checkpoint (package audit).
	MaxTotalBytes int64 `toml:"max_total_bytes"`
	// RefusalIntervalSeconds is how long refusals of one kind from one
	// source are counted into one record.
	RefusalIntervalSeconds int `toml:"refusal_interval_seconds"`
}

// Commands configures command execution, which is off until the local user
// turns it on (here or with --enable-shell); no remote request can.
type Commands struct {
	Enabled               bool  `toml:"enabled"`
	MaxConcurrent         int   `toml:"max_concurrent"`          // commands running at once
	DefaultTimeoutSeconds int   `toml:"default_timeout_seconds"` // when a request names none
	MaxTimeoutSeconds     int   `toml:"max_timeout_seconds"`     // longest a request may ask for
	InlineOutputBytes     int   `toml:"inline_output_bytes"`     // head+tail of each stream returned inline
	MaxStreamBytes        int64 `toml:"max_stream_bytes"`        // stored per stream; the rest is counted, not kept
	RetentionHours        int   `toml:"retention_hours"`         // how long captured output is kept
	// Sandbox is "workdir" (confine every command to its workdir where
	// the OS allows) or "off".
	Sandbox string `toml:"sandbox"`
	// Network is "off" (sandboxed commands have no network) or "on".
	Network string `toml:"network"`
	// Writable are further directories sandboxed commands may write in.
	Writable []string `toml:"writable"`
	// Hidden are paths sandboxed commands may not read; nil means the
	// built-in list (sandbox.DefaultHidden), an empty list none.
	Hidden []string `toml:"hidden"`
}

// Link configures the outbound platform link (off while URL is empty).
type Link struct {
	URL           string `toml:"url"`            // control endpoint: wss://…, or ws:// to loopback
	TokenFile     string `toml:"token_file"`     // bearer token file; else $HOSTLINK_PLATFORM_TOKEN
	MaxConcurrent int    `toml:"max_concurrent"` // in-flight platform requests per connection; HELLO_ACK can lower it
}

// Computer configures computer control (computer_desktops, _observe and
// _act), which is off until the local user turns it on; no remote request
// can.
type Computer struct {
	Enabled               bool `toml:"enabled"`
	SettleMS              int  `toml:"settle_ms"`               // wait after an act before its fresh observation
	MaxAccessibilityBytes int  `toml:"max_accessibility_bytes"` // accessibility text per observation
	// Clipboard opts in to clipboard writes and writeback-only reads;
	// ClipboardReadForeign also lets reads return what others copied.
	Clipboard            bool `toml:"clipboard"`
	ClipboardReadForeign bool `toml:"clipboard_read_foreign"`
}

// Default returns the default configuration. It has no workdirs: the caller
// adds the default "workspace" workdir, whose directory depends on the OS.
func Default() *Config {
	return &Config{
		Limits: Limits{
			MaxReadBytes:       16 << 20,
			MaxWriteBytes:      16 << 20,
			MaxListEntries:     1000,
			MaxSearchMatches:   1000,
			MaxSearchBytes:     256 << 20,
			MaxSearchFileBytes: 8 << 20,
		},
		Server: Server{Listen: "127.0.0.1:7717", MaxConnections: 256, MaxConnectionsPerPeer: 64},
		Audit:  Audit{MaxFileBytes: 64 << 20, MaxTotalBytes: 1 << 30, RefusalIntervalSeconds: 60},
		Commands: Commands{
			MaxConcurrent:         4,
			DefaultTimeoutSeconds: 60,
			MaxTimeoutSeconds:     3600,
			InlineOutputBytes:     16 << 10,
			MaxStreamBytes:        1 << 30,
			RetentionHours:        7 * 24,
			Sandbox:               "workdir",
			Network:               "off",
		},
		Link:      Link{MaxConcurrent: 16},
		Computer:  Computer{SettleMS: 150, MaxAccessibilityBytes: 32 << 10},
		Log:       Log{Level: "info", MaxFileBytes: 10 << 20},
		Agents:    defaultAgents(),
		Policy:    defaultPolicy(),
		Companion: defaultCompanion(),
		Update:    Update{URL: DefaultUpdateURL},
		Mesh:      Mesh{Classes: slices.Clone(DefaultMeshClasses), MaxConcurrent: 16},
	}
}

//go:embed defaults.toml
var defaultsTOML string

// DefaultTOML returns a config.toml that documents every key and sets each to
// its default, suitable as a starting point for users.
func DefaultTOML() string { return defaultsTOML }

// Load reads the configuration file at path. If the file does not exist, Load
// returns Default() unless explicit is set (the user named the file, so its
// absence is a mistake).
func Load(path string, explicit bool) (*Config, error) {
	doc, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return Default(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	// The home directory is only needed to expand ~, and parse reports it
	// missing only then.
	home, _ := os.UserHomeDir()
	return parse(doc, path, home)
}
