package daemon

import (
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/companion"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/version"
)

// transports records the endpoints being served, for Status.
type transports struct {
	mu   sync.Mutex
	list []apitype.TransportStatus
}

// add records a transport that is up, in status and in the log.
func (t *transports) add(name audit.Transport, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.list = append(t.list, apitype.TransportStatus{Name: name, Address: addr})
	slog.Info("transport up", "transport", string(name), "address", addr)
}

// down records that every transport has stopped.
func (t *transports) down() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tr := range t.list {
		slog.Info("transport down", "transport", string(tr.Name), "address", tr.Address)
	}
	t.list = nil
}

func (t *transports) snapshot() []apitype.TransportStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.list)
}

// Transports lists the endpoints being served. Unlike Status it measures
// nothing, so serve's ready line does not wait for the sandbox probe.
func (d *Daemon) Transports() []apitype.TransportStatus {
	return d.transports.snapshot()
}

// Status returns a snapshot of the daemon. Lists are never nil, so that
// JSON shows [] rather than null.
func (d *Daemon) Status() apitype.Status {
	s := apitype.Status{
		Version:       version.Version,
		Build:         version.Get(),
		PID:           os.Getpid(),
		Started:       d.Started.UTC().Truncate(time.Second),
		UptimeSeconds: int64(time.Since(d.Started).Seconds()),
		Transports:    d.transports.snapshot(),
		Link:          d.linkStatus(),
		Workdirs:      []apitype.WorkdirStatus{},
		Commands:      []apitype.CommandStatus{},
		Tasks:         []apitype.TaskStatus{},
	}
	if s.Transports == nil {
		s.Transports = []apitype.TransportStatus{}
	}
	for _, wd := range d.Files.Workdirs() {
		s.Workdirs = append(s.Workdirs, apitype.WorkdirStatus{Alias: wd.Alias, Path: wd.Root.Dir(), ReadOnly: wd.Root.ReadOnly()})
	}
	s.Capabilities = append(s.Capabilities, apitype.CapabilityStatus{Name: string(ops.Files), Ready: true})
	// Commands is set exactly when the local user enabled execution.
	shell := apitype.CapabilityStatus{Name: string(ops.Shell), Ready: d.Commands != nil}
	if !shell.Ready {
		shell.Reason = "disabled (enable locally with --enable-shell)"
	}
	if d.Commands != nil {
		sb := d.SandboxStatus()
		s.Sandbox = &sb
		if sb.Mode == sandbox.Failed {
			// Only a request approved to run unsandboxed still runs.
			shell.Ready = false
			shell.Reason = "the command sandbox cannot be set up here, so commands are refused (" + sb.Reason + `); [commands] sandbox = "off" runs them unconfined`
		}
	}
	s.Capabilities = append(s.Capabilities, shell)
	s.Capabilities = append(s.Capabilities, d.computerStatus())
	s.Capabilities = append(s.Capabilities, d.agentCapability())
	s.Tasks = append(s.Tasks, d.agentTasks()...)
	if d.Commands != nil {
		for _, r := range d.Commands.Running() {
			s.Commands = append(s.Commands, apitype.CommandStatus{ID: r.CaptureID, Command: r.Command, Pid: r.Pid, Started: r.Started.UTC()})
		}
	}
	if rt := d.companion.runtime; rt != nil {
		s.Companion = companionStatus(rt)
	}
	if d.updates != nil {
		s.Update = d.updates.Status()
	}
	return s
}

// companionStatus is the companion route's part of Status.
func companionStatus(rt *companion.Runtime) *apitype.CompanionStatus {
	cs := &apitype.CompanionStatus{Listen: rt.Addr(), Connected: []apitype.CompanionConnection{}}
	for _, c := range rt.Connections() {
		cs.Connected = append(cs.Connected, apitype.CompanionConnection{ID: c.ID, Name: c.Name, Version: c.Version, OS: c.OS,
			Route: c.Route, Capabilities: c.Capabilities, Desktops: c.Desktops, Connected: c.Connected})
	}
	if h := rt.HelperState(); h != nil {
		cs.Helper = &apitype.CompanionHelper{Program: h.Program, Starts: h.Starts, Connected: h.Connected, LastError: h.LastError, LastExit: h.LastExit}
	}
	return cs
}
