package companionapi

import "time"

// StatusArgs is companion_status' (empty) request.
type StatusArgs struct{}

// StatusResult is companion_status's response.
type StatusResult struct {
	Listen     string       `json:"listen"`
	Version    int          `json:"version" jsonschema:"the runtime's companion protocol version"`
	Paired     []Paired     `json:"paired"`
	Connected  []Connection `json:"connected"`
	Refused    []Refusal    `json:"refused,omitempty" jsonschema:"companions refused recently, e.g. computer_companion_upgrade_required"`
	WSLInterop Route        `json:"wsl_interop"`
	// Helper is the companion this runtime starts over WSL interop
	// ([companion] wsl_helper), when one is configured and the route is
	// available.
	Helper *HelperStatus `json:"helper,omitempty"`
}

// Connection is a connected companion.
type Connection struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Version      int      `json:"version"`
	OS           string   `json:"os"`
	Route        string   `json:"route" enum:"companion,wsl_interop"`
	Capabilities []string `json:"capabilities"`
	Desktops     []string `json:"desktops"`
	Connected    string   `json:"connected_at"`
}

// Paired is one paired companion.
type Paired struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	PairedAt time.Time `json:"paired_at"`
}

// Refusal is a companion turned away at hello, kept for companion_status.
type Refusal struct {
	Name    string    `json:"name,omitempty"`
	Version int       `json:"version"`
	Code    string    `json:"code"`
	Needed  int       `json:"needed_version,omitempty"`
	At      time.Time `json:"at"`
}

// Route is whether an execution route is available here, and why not.
type Route struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty" jsonschema:"not_linux, not_wsl, interop_disabled, windows_unreachable"`
	Detail    string `json:"detail,omitempty"`
	// Helper is the Windows program that proved interop works.
	Helper string `json:"helper,omitempty"`
}

// HelperStatus is the state of the helper the runtime supervises.
type HelperStatus struct {
	Program   string `json:"program"`
	Starts    int    `json:"starts" jsonschema:"times the helper was started"`
	Connected bool   `json:"connected"`
	LastError string `json:"last_error,omitempty" jsonschema:"why the last run of the helper ended"`
	LastExit  string `json:"last_exit,omitempty"`
}
