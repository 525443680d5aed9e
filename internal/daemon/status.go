package daemon

import (
	"os"
	"slices"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/companion"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/version"
)

// Status is a snapshot of the running daemon, as `hostlink status` shows it.
type Status struct {
	Version       string             `json:"version"`
	Build         version.Info       `json:"build"` // the daemon binary's version, commit, date, Go and target
	PID           int                `json:"pid"`
	Started       time.Time          `json:"started"`
	UptimeSeconds int64              `json:"uptime_seconds"`
	Transports    []TransportStatus  `json:"transports"`
	Link          LinkStatus         `json:"link"`
	Capabilities  []CapabilityStatus `json:"capabilities"`
	// Sandbox is the confinement commands get, as measured; set while
	// commands are enabled.
	Sandbox  *sandbox.Status `json:"sandbox,omitempty"`
	Workdirs []WorkdirStatus `json:"workdirs"`
	Commands []CommandStatus `json:"commands"` // running commands
	Tasks    []TaskStatus    `json:"tasks"`    // running agent tasks
	// Companion is the runtime side of the companion route, when
	// [companion] listen or wsl_helper is set.
	Companion *CompanionStatus `json:"companion,omitempty"`
}

// CompanionStatus is who reaches this hostlink as its companion.
type CompanionStatus struct {
	Listen    string                  `json:"listen,omitempty"`
	Connected []companion.Connection  `json:"connected"`
	Helper    *companion.HelperStatus `json:"helper,omitempty"`
}

// TransportStatus is one endpoint the daemon serves.
type TransportStatus struct {
	Name    string `json:"name"`    // "mcp-http", "ipc"
	Address string `json:"address"` // URL, socket path or pipe name
}

// LinkStatus is the state of the link to the platform.
type LinkStatus struct {
	State  string      `json:"state"` // "not_configured", "connecting", "connected", "backoff", "stopped"
	Reason string      `json:"reason,omitempty"`
	Detail *linkDetail `json:"detail,omitempty"`
}

// CapabilityStatus says whether a capability is ready and, if not, why and
// how to enable it.
type CapabilityStatus struct {
	Name   string `json:"name"`
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
}

// WorkdirStatus is one configured workdir.
type WorkdirStatus struct {
	Alias    string `json:"alias"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only"`
}

// CommandStatus is a running command.
type CommandStatus struct {
	ID      string    `json:"id"` // capture id
	Command string    `json:"command"`
	Pid     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// TaskStatus is a running agent task.
type TaskStatus struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Started time.Time `json:"started"`
}

// transports records the endpoints being served, for Status.
type transports struct {
	mu   sync.Mutex
	list []TransportStatus
}

func (t *transports) add(name, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.list = append(t.list, TransportStatus{Name: name, Address: addr})
}

func (t *transports) snapshot() []TransportStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.list)
}

// Status returns a snapshot of the daemon. Lists are never nil, so that
// JSON shows [] rather than null.
func (d *Daemon) Status() Status {
	s := Status{
		Version:       version.Version,
		Build:         version.Get(),
		PID:           os.Getpid(),
		Started:       d.Started.UTC().Truncate(time.Second),
		UptimeSeconds: int64(time.Since(d.Started).Seconds()),
		Transports:    d.transports.snapshot(),
		Link:          d.linkStatus(),
		Workdirs:      []WorkdirStatus{},
		Commands:      []CommandStatus{},
		Tasks:         []TaskStatus{},
	}
	if s.Transports == nil {
		s.Transports = []TransportStatus{}
	}
	for _, wd := range d.Files.Workdirs() {
		s.Workdirs = append(s.Workdirs, WorkdirStatus{Alias: wd.Alias, Path: wd.Root.Dir(), ReadOnly: wd.Root.ReadOnly()})
	}
	s.Capabilities = append(s.Capabilities, CapabilityStatus{Name: "files", Ready: true})
	// Commands is set exactly when the local user enabled execution.
	shell := CapabilityStatus{Name: "shell", Ready: d.Commands != nil}
	if !shell.Ready {
		shell.Reason = "disabled (enable locally with --enable-shell)"
	}
	s.Capabilities = append(s.Capabilities, shell)
	if d.Commands != nil {
		sb := d.SandboxStatus()
		s.Sandbox = &sb
	}
	s.Capabilities = append(s.Capabilities, d.computerStatus())
	s.Capabilities = append(s.Capabilities, d.agentCapability())
	s.Tasks = append(s.Tasks, d.agentTasks()...)
	if d.Commands != nil {
		for _, r := range d.Commands.Running() {
			s.Commands = append(s.Commands, CommandStatus{ID: r.CaptureID, Command: r.Command, Pid: r.Pid, Started: r.Started.UTC()})
		}
	}
	if rt := d.companion.runtime; rt != nil {
		s.Companion = &CompanionStatus{Listen: rt.Addr(), Connected: rt.Connections(), Helper: rt.HelperState()}
	}
	return s
}
