package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/mesh"
)

// StartMesh serves the configured workdirs' registry on the mesh, as
// [mesh] and the enrolment `hostlink mesh join` stored say, until stop
// is called. Callers over the mesh get transport mesh: the same
// validation, policy, approvals, budgets, sandbox and audit as every
// other transport, limited to the classes [mesh] offers. A bus that is
// down is retried in the background; the daemon serves locally all the
// same.
func (d *Daemon) StartMesh(ctx context.Context) (stop func(), err error) {
	mc := d.Config.Mesh
	enr, err := mesh.LoadEnrolment(d.Dirs.State)
	if err != nil {
		return nil, fmt.Errorf("[mesh] enabled: %w", err)
	}
	st, err := credstore.Open(credstore.Options{StateDir: d.Dirs.State})
	if err != nil {
		return nil, fmt.Errorf("mesh: the machine's key cannot be read: %w", err)
	}
	seed, err := st.Get(ctx, mesh.SeedName)
	if err != nil {
		return nil, fmt.Errorf("mesh: the machine's key cannot be read (%s): %w; join again with `hostlink mesh join`", st.Describe(), err)
	}
	// The encrypted file's key derivation (Argon2id) used 64 MiB that the
	// runtime would otherwise hold for as long as the daemon idles.
	debug.FreeOSMemory()
	servers := mc.Servers
	if len(servers) == 0 {
		servers = enr.Servers
	}
	name := mc.Name
	if name == "" {
		name = enr.Name
	}
	if name == "" {
		name = d.Info.Hostname
	}
	idem, err := mesh.OpenIdemStore(filepath.Join(d.Dirs.State, "mesh.db"))
	if err != nil {
		return nil, err
	}
	eo := mesh.ExecutorOptions{
		Dial: mesh.Dial{Servers: servers, Creds: mesh.Creds{JWT: enr.JWT, Seed: seed}, CA: mc.CA, Log: slog.Default()},
		Machine: mesh.Machine{Name: name, OS: d.Info.Platform, Arch: d.Info.Arch, Version: d.Info.Version,
			Labels: enr.Labels},
		Registry:      d.Registry,
		Classes:       d.Config.MeshClasses(),
		Callers:       mesh.Trusted(d.Dirs.State, false),
		MaxConcurrent: mc.MaxConcurrent,
		Idempotency:   idem,
		Approval: func(id string) (string, time.Time, bool) {
			a, ok := d.Approvals().Get(id)
			return a.Action.Summary, a.Deadline, ok
		},
		PublishApprovals: mc.PublishApprovals,
		StateDir:         d.Dirs.State,
		Decide: func(id string, approve bool, by string) (any, error) {
			return d.Approvals().DecideWith(id, approvals.Decision{Approve: approve, By: by, Via: audit.Mesh})
		},
	}
	if mc.ExportAudit {
		eo.AuditDir, eo.ExportState = d.Dirs.Audit, filepath.Join(d.Dirs.State, "mesh-export.json")
	}
	ex, err := mesh.StartExecutor(eo)
	if err != nil {
		idem.Close()
		return nil, err
	}
	d.transports.add(audit.Mesh, strings.Join(servers, ",")+" as "+ex.Key())
	if err := d.Event("mesh_start", map[string]any{"machine": ex.Key(), "servers": servers, "classes": mc.Classes}); err != nil {
		ex.Close()
		idem.Close()
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return func() {
		ex.Close()
		idem.Close()
	}, nil
}
