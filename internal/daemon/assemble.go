package daemon

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/browse"
	"github.com/hostlink/hostlink/internal/commands"
	"github.com/hostlink/hostlink/internal/companion"
	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/lease"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// assembly is one registry assemble built and the per-registry services it
// owns.
type assembly struct {
	reg      *ops.Registry
	files    *files.Service
	commands *commands.Service // nil unless command execution is enabled
}

func (a *assembly) close() {
	if a.commands != nil {
		a.commands.Close()
	}
}

// registries are the assemblies a daemon built, so that a test can check
// that every registry it serves came from assemble, and Close can release
// them.
type registries struct {
	mu  sync.Mutex
	all []*assembly
}

func (r *registries) add(a *assembly) {
	r.mu.Lock()
	r.all = append(r.all, a)
	r.mu.Unlock()
}

// remove forgets a (a platform session ended) and releases it.
func (r *registries) remove(a *assembly) {
	r.mu.Lock()
	for i, x := range r.all {
		if x == a {
			r.all = append(r.all[:i], r.all[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	a.close()
}

// has reports whether reg came from assemble.
func (r *registries) has(reg *ops.Registry) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.all {
		if a.reg == reg {
			return true
		}
	}
	return false
}

func (r *registries) close() {
	r.mu.Lock()
	all := r.all
	r.all = nil
	r.mu.Unlock()
	for _, a := range all {
		a.close()
	}
}

// newFiles is the file service over workdirs with the configured limits.
func (d *Daemon) newFiles(workdirs []*files.Workdir) *files.Service {
	l := d.Config.Limits
	return files.NewService(workdirs, files.Limits{
		MaxReadBytes:       l.MaxReadBytes,
		MaxWriteBytes:      l.MaxWriteBytes,
		MaxListEntries:     l.MaxListEntries,
		MaxSearchMatches:   l.MaxSearchMatches,
		MaxSearchBytes:     l.MaxSearchBytes,
		MaxSearchFileBytes: l.MaxSearchFileBytes,
	})
}

// assemble builds the registry over fs: the one and only place that does,
// for the configured workdirs and for each platform session alike. Every
// registry gets the same audit log, policy (resolving through fs), shared
// budgets, writer-lease guard and registrations: files; commands, the
// desktop, agents and companions where the local user enabled them; the
// platform-folder browser; the local user's controls (status, approvals,
// reload), which only the control channel offers. The registry is sealed
// and recorded in d.assembled.
func (d *Daemon) assemble(fs *files.Service) *assembly {
	if d.Agents != nil {
		fs.SetGuard(writerLease{leases: d.Agents.Leases(), overlaps: d.overlapping(fs)})
	}
	reg := ops.New(ops.Options{Audit: loggedAuditor{d.Audit}, Policy: ops.Gate(d.pol.engine, d.hooks(fs)), Budgets: d.budgets, Results: d.thumbs.Keep, Running: d.trim.Begin})
	a := &assembly{reg: reg, files: fs}
	files.Register(reg, fs)
	if d.captures != nil {
		cc := d.Config.Commands
		a.commands = commands.New(fs, d.captures, commands.Options{
			MaxConcurrent:  cc.MaxConcurrent,
			DefaultTimeout: time.Duration(cc.DefaultTimeoutSeconds) * time.Second,
			MaxTimeout:     time.Duration(cc.MaxTimeoutSeconds) * time.Second,
			InlineBytes:    cc.InlineOutputBytes,
			Sandbox:        d.sandboxPolicy(),
		})
		commands.Register(reg, a.commands)
		fs.SetCommandSandbox(d.sandboxDescription)
	}
	if d.Computer != nil {
		// The desktop is the machine's, not a session's: one service.
		desktop.Register(reg, d.Computer)
	}
	if d.Agents != nil {
		// So is the agent engine: its tasks run in the configured
		// workdirs the local user opened to agents, whatever folder a
		// session has.
		agent.Register(reg, d.Agents)
	}
	if rt := d.companion.runtime; rt != nil {
		companion.Register(reg, rt)
	}
	browse.Register(reg, d.browse)
	d.registerLocal(reg)
	d.disableOff(reg)
	reg.Seal()
	d.assembled.add(a)
	return a
}

// The fixes CAPABILITY_DISABLED names: what turns each capability on.
const (
	enableShell    = "enable it locally with `hostlink serve --enable-shell` or [commands] enabled = true in the config"
	enableComputer = "enable it locally with [computer] enabled = true in the config"
	enableAgents   = "enable it locally with [agents] enabled = true in the config and agent_mode on a [[workdirs]] entry"
)

// disableOff names the operations of the capabilities the local user has
// not enabled, so that calling one says how to enable it.
func (d *Daemon) disableOff(reg *ops.Registry) {
	if d.captures == nil {
		reg.Disable(commands.Specs(), enableShell)
	}
	if d.Computer == nil {
		reg.Disable(desktop.Specs(), enableComputer)
	}
	if d.Agents == nil {
		reg.Disable(agent.Specs(), enableAgents)
	}
}

// hooks let the policy see what a request of fs's registry touches.
func (d *Daemon) hooks(fs *files.Service) policy.Hooks {
	h := policy.Hooks{Locate: fs.Locate, MeasureDir: fs.MeasureDir,
		CommandTimeout: time.Duration(d.Config.Commands.DefaultTimeoutSeconds) * time.Second}
	if fs == d.Files {
		// A path grant's directory is placed the way the operations
		// place paths: a link leading out of the workdir resolves to
		// nothing, and cannot be granted.
		d.Approvals().SetResolver(func(workdir, path string) (string, error) {
			loc, err := fs.Locate(workdir, path)
			if err == nil && loc.Real == "" {
				err = fmt.Errorf("%s does not resolve inside workdir %s", path, workdir)
			}
			return loc.Real, err
		})
	}
	if d.Computer != nil {
		h.Window, h.Image = d.Computer.ActTarget, d.Computer.ActImage
	}
	if d.captures != nil {
		h.CommandSandbox = d.sandboxFailure
	}
	return h
}

// overlapping maps each of fs's workdir aliases to the configured
// workdirs whose directories contain it or lie inside it: the agent
// writer leases a mutation there must respect. For the configured
// workdirs that is each one itself (and any nested in it); for a platform
// session's folder, the configured workdirs it shares files with.
func (d *Daemon) overlapping(fs *files.Service) map[string][]string {
	out := map[string][]string{}
	for _, wd := range fs.Workdirs() {
		for _, cw := range d.Files.Workdirs() {
			if within(wd.Root.Dir(), cw.Root.Dir()) || within(cw.Root.Dir(), wd.Root.Dir()) {
				out[wd.Alias] = append(out[wd.Alias], cw.Alias)
			}
		}
	}
	return out
}

// within reports whether path is dir or inside it (canonical paths).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// writerLease is the files.Guard of an assembled registry: a mutation in
// one of its workdirs takes, shared, the writer lease of every configured
// workdir it overlaps, so that it never runs beside an agent writing
// there, in any hostlink process, whichever registry it came through.
type writerLease struct {
	leases   *lease.Workdirs
	overlaps map[string][]string
}

func (g writerLease) Mutation(alias string) (func(), error) {
	var held []func()
	release := func() {
		for _, r := range held {
			r()
		}
	}
	for _, cw := range g.overlaps[alias] {
		r, err := g.leases.Mutation(cw)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, r)
	}
	return release, nil
}
