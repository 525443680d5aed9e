package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/browse"
	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/commands"
	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/console"
	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/hostinfo"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/memtrim"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/private"
	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/update"
	"github.com/hostlink/hostlink/internal/version"
)

// Options are the command-line overrides of the configuration.
type Options struct {
	ConfigPath  string // explicit config file; "" means the per-OS default (optional)
	AllowedRoot string // replaces the default workdir's path
	Listen      string // replaces server.listen
	EnableShell bool   // turns on command execution (as commands.enabled does)
	// IdleExit, when positive, stops ServeHTTP after that long with no
	// client (see idleWatch): for a daemon `hostlink mcp` started.
	IdleExit time.Duration
	// Mode is how this daemon runs, for its log: ModeServe (the default)
	// or ModeAutoStarted. A daemon under a service manager is recognised
	// as ModeService whatever Mode says (see runMode).
	Mode string
	// Runtimes adds agent runtimes beside the real CLIs', by name: how
	// tests wire the fake runtime. Production leaves it nil.
	Runtimes map[string]agent.Factory
}

// Daemon is an assembled hostlink.
type Daemon struct {
	Dirs     paths.Dirs
	Config   *config.Config
	Info     hostinfo.Info
	Audit    *audit.Log
	Refusals *audit.Refusals   // refused requests, counted into Audit
	Registry *ops.Registry     // the configured workdirs' registry (assemble)
	Files    *files.Service    // its file service
	Commands *commands.Service // its command service; nil unless command execution is enabled
	Agents   *agent.Engine     // nil unless agents are enabled
	Computer *desktop.Service  // nil unless computer control is enabled
	Started  time.Time
	IdleExit time.Duration // Options.IdleExit
	Mode     string        // how it runs (runMode): ModeServe, ModeAutoStarted or ModeService

	stopReq chan string // a stop's reason, to ServeHTTP (requestStop)

	thumbs  *console.Thumbs  // the latest observations, small, for the console's desktop page
	trim    *memtrim.Trimmer // gives the memory of a burst of calls back once they stop
	console consoleHolder    // the console, once ServeHTTP serves it

	configFile  string         // the configuration file in force (it may not exist)
	loaded      *config.Config // that file as loaded at the start, before flags
	roots       []*jail.Root
	transports  transports
	captures    *capture.Store
	stopCleanup context.CancelFunc
	link        linkHolder  // the platform link, once StartLink runs
	pol         policyState // the approval policy and its broker (policy.go)
	companion   companionState
	browse      *browse.Service // the link control connection's folder browser
	budgets     *ops.Budgets    // shared by every registry: the machine's limits
	sessions    *ops.Sessions   // the client sessions open now
	assembled   registries      // every registry assemble built (assemble.go)
	updates     *update.Checker // the update check, while [update] check is on
}

// Open loads configuration, opens the workdirs and the audit log, and
// registers the operations. It fails, and hostlink does not start, if any
// of them cannot be had: in particular when the audit log cannot be opened.
func Open(o Options) (*Daemon, error) {
	dirs, err := paths.Resolve()
	if err != nil {
		return nil, err
	}
	cfgPath, explicit := o.ConfigPath, o.ConfigPath != ""
	if !explicit {
		cfgPath = dirs.ConfigFile()
	}
	cfg, err := config.Load(cfgPath, explicit)
	if err != nil {
		return nil, err
	}
	// The file as loaded, before the flags below: what a reload compares
	// the file with.
	loaded := *cfg
	if o.Listen != "" {
		cfg.Server.Listen = o.Listen
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("--listen: %w", err)
		}
	}
	info, err := hostinfo.Collect()
	if err != nil {
		return nil, err
	}
	d := &Daemon{Dirs: dirs, Config: cfg, Info: info, Started: time.Now(), configFile: cfgPath, loaded: &loaded}
	ok := false
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	d.IdleExit = o.IdleExit
	d.stopReq = make(chan string, 1)
	d.openLogging(o.Mode)
	// Before anything reconciles or reports: what a hostlink that died
	// with its guardian left running is ended now.
	if n, err := procs.UseLedger(filepath.Join(dirs.Runtime, "children")); err != nil {
		slog.Warn("process ledger unavailable: a command may outlive hostlink if hostlink and its guardian are killed", "err", err)
	} else if n > 0 {
		slog.Warn("ended processes a previous hostlink left running", "processes", n)
	}
	if err := d.openWorkdirs(o.AllowedRoot); err != nil {
		return nil, err
	}
	if err := d.openAudit(); err != nil {
		return nil, err
	}
	d.openPolicy(cfgPath, explicit)
	if err := d.openCommands(o.EnableShell); err != nil {
		return nil, err
	}
	if err := d.openAgents(o.Runtimes); err != nil {
		return nil, err
	}
	d.openComputer()
	if err := d.openCompanion(); err != nil {
		return nil, err
	}
	if d.updates, err = newUpdateChecker(cfg.Update); err != nil {
		return nil, err
	}
	d.browse = browse.New(browse.Options{})
	d.sessions = ops.NewSessions()
	d.budgets = ops.NewBudgets()
	d.thumbs = console.NewThumbs()
	d.trim = memtrim.New(memtrim.DefaultQuiet)
	a := d.assemble(d.Files)
	d.Registry, d.Commands = a.reg, a.commands
	ok = true
	return d, nil
}

// openWorkdirs opens every configured workdir. With none configured, the
// default workdir "workspace" is created (privately) on first run.
func (d *Daemon) openWorkdirs(allowedRoot string) error {
	wds := d.Config.Workdirs
	if len(wds) == 0 || allowedRoot != "" {
		p := d.Dirs.Workspace
		if allowedRoot != "" {
			abs, err := filepath.Abs(allowedRoot)
			if err != nil {
				return fmt.Errorf("--allowed-root: %w", err)
			}
			p = abs
		}
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			if err := private.MkdirAll(p); err != nil {
				return fmt.Errorf("creating workspace %s: %w", p, err)
			}
		}
		def := config.Workdir{Alias: "workspace", Path: p, Description: "default workspace"}
		if allowedRoot != "" {
			def.Description = "--allowed-root"
		}
		wds = append([]config.Workdir{def}, wdsWithout(wds, def.Alias)...)
	}
	var list []*files.Workdir
	protected, guarded := d.protectedPaths(), ownFiles(d.Dirs)
	for _, w := range wds {
		if err := d.checkWorkdir(w.Path); err != nil {
			return fmt.Errorf("workdir %q: %w", w.Alias, err)
		}
		root, err := jail.Open(w.Path, jail.Options{
			ReadOnly:    w.ReadOnly,
			Protected:   protected,
			Guarded:     guarded,
			Hardlinks:   w.AllowHardlinks(),
			CrossMounts: w.CrossMounts,
		})
		if err != nil {
			return fmt.Errorf("workdir %q (%s): %w", w.Alias, w.Path, err)
		}
		d.roots = append(d.roots, root)
		list = append(list, &files.Workdir{Alias: w.Alias, Description: w.Description, Root: root})
	}
	d.Files = d.newFiles(list)
	return nil
}

func wdsWithout(wds []config.Workdir, alias string) []config.Workdir {
	var out []config.Workdir
	for _, w := range wds {
		if w.Alias != alias {
			out = append(out, w)
		}
	}
	return out
}

func (d *Daemon) openAudit() error {
	log, err := OpenAudit(d.Dirs, d.Config, d.Info.MachineID)
	if err != nil {
		return err
	}
	d.Audit = log
	d.Refusals = audit.NewRefusals(log, time.Duration(d.Config.Audit.RefusalIntervalSeconds)*time.Second)
	return nil
}

// OpenAudit opens the audit log of dirs as the daemon does. Other
// processes that act on this machine (a companion) append to the same
// chain through it.
func OpenAudit(dirs paths.Dirs, cfg *config.Config, machineID string) (*audit.Log, error) {
	if err := private.MkdirAll(dirs.State); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	key, err := audit.LoadOrCreateKey(dirs.AuditKey())
	if err != nil {
		return nil, fmt.Errorf("audit key: %w", err)
	}
	log, err := audit.Open(audit.Options{
		Dir:           dirs.Audit,
		Key:           key,
		MaxBytes:      cfg.Audit.MaxFileBytes,
		MaxTotalBytes: cfg.Audit.MaxTotalBytes,
		MachineID:     machineID,
		Version:       version.Version,
		HeadPath:      dirs.AuditHead(),
	})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w (hostlink does not run without its audit log)", err)
	}
	return log, nil
}

// Event records a daemon life-cycle event (start, stop) in the audit log.
func (d *Daemon) Event(op string, details map[string]any) error {
	return d.Audit.Append(audit.Record{Transport: audit.Internal, Op: op, Code: "OK", Details: details})
}

// Close releases the workdirs and the audit log.
func (d *Daemon) Close() error {
	defer d.closeLogging()
	d.closeAgents()
	d.assembled.close()
	d.closeCommands()
	d.closeCompanion()
	d.closeComputer()
	for _, r := range d.roots {
		r.Close()
	}
	d.Refusals.Close()
	if d.Audit != nil {
		return d.Audit.Close()
	}
	return nil
}
