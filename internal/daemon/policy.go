package daemon

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/autostart"
	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/rootgrant"
)

// policyState is the approval policy in force, where it was loaded from,
// and the broker holding approvals.
type policyState struct {
	mu       sync.Mutex // serializes reloads
	engine   *policy.Engine
	cfgPath  string
	explicit bool

	foldersMu sync.Mutex
	folders   map[string]bool // platform folders the user approved (rootgrant fingerprints), for this process's life

	quiet atomic.Bool // notifications = "off"
}

// openPolicy sets up the approval broker and the policy from the loaded
// configuration, before any operation is registered.
func (d *Daemon) openPolicy(cfgPath string, explicit bool) {
	notifier := &approvals.Notifier{}
	b := approvals.New(approvals.Options{Audit: d.Audit, Notify: func(a approvals.Approval) {
		if !d.pol.quiet.Load() {
			notifier.Notify(a)
		}
	}})
	notifier.Broker = b
	d.pol.engine, d.pol.cfgPath, d.pol.explicit = policy.New(PolicyConfig(d.Config.Policy), b), cfgPath, explicit
	d.pol.quiet.Store(d.Config.Policy.Notifications == "off")
}

// PolicyConfig turns the [policy] section into the policy package's model.
func PolicyConfig(p config.Policy) policy.Config {
	rules := func(r config.PolicyRules) policy.Rules {
		out := policy.Rules{Modes: map[policy.Class]policy.Mode{}, AllowCommands: r.AllowCommands, AllowPaths: r.AllowPaths}
		for k, v := range r.Modes() {
			out.Modes[policy.Class(k)] = policy.Mode(v)
		}
		return out
	}
	c := policy.Config{
		Default:         rules(p.PolicyRules),
		Timeout:         time.Duration(p.ApprovalTimeoutSeconds) * time.Second,
		Wait:            time.Duration(p.WaitSeconds) * time.Second,
		PlatformFolders: policy.Mode(p.PlatformFolders),
		ApproveInClient: p.ApproveInClient,
		ConfirmInPerson: p.ConfirmInPerson,
	}
	if len(p.Workdirs) > 0 {
		c.Workdirs = map[string]policy.Rules{}
		for alias, r := range p.Workdirs {
			c.Workdirs[alias] = rules(r)
		}
	}
	return c
}

// Approvals is the broker of pending approvals; decisions are offered only
// on the local user's channels (the control channel and the console).
func (d *Daemon) Approvals() *approvals.Broker { return d.pol.engine.Broker() }

// Policy returns the policy in force.
func (d *Daemon) Policy() policy.Config { return d.pol.engine.Config() }

// Reload reads the configuration file again and puts its [policy] in force
// (other sections take effect at the next start). An invalid file changes
// nothing. Either way the attempt is audited, with who asked.
func (d *Daemon) Reload(by string) (apitype.ReloadResult, error) {
	d.pol.mu.Lock()
	defer d.pol.mu.Unlock()
	cfg, err := config.Load(d.pol.cfgPath, d.pol.explicit)
	if err == nil {
		err = d.checkPolicyWorkdirs(cfg.Policy)
	}
	if err != nil {
		if aerr := d.Audit.Append(audit.Record{Time: time.Now(), Transport: audit.Internal, Peer: by, Op: "policy_reload",
			Code: string(errcode.InvalidArgument), Details: map[string]any{"error": err.Error()}}); aerr != nil {
			slog.Warn("a refused policy reload is not in the audit log", "err", aerr)
		}
		slog.Warn("configuration not reloaded", "by", by, "config", d.pol.cfgPath, "code", string(errcode.InvalidArgument), "err", err)
		return apitype.ReloadResult{}, errcode.New(errcode.InvalidArgument, "the configuration was not reloaded: %v", err)
	}
	summary := policySummary(cfg.Policy)
	var restart []string
	for _, k := range config.Changed(d.loaded, cfg) {
		if k != "policy" && !strings.HasPrefix(k, "policy.") {
			restart = append(restart, k)
		}
	}
	details := maps.Clone(summary)
	if len(restart) > 0 {
		details["restart_needed"] = restart
	}
	// The record comes first: a policy change the log cannot show does
	// not happen.
	if err := d.Audit.Append(audit.Record{Time: time.Now(), Transport: audit.Internal, Peer: by, Op: "policy_reload", Code: "OK",
		Details: details}); err != nil {
		return apitype.ReloadResult{}, errcode.New(errcode.AuditUnavailable, "the audit log cannot be written; the policy was not reloaded")
	}
	was := d.Policy().ConfirmInPerson
	d.pol.engine.Set(PolicyConfig(cfg.Policy))
	d.pol.quiet.Store(cfg.Policy.Notifications == "off")
	if c := d.console.p.Load(); c != nil && cfg.Policy.ConfirmInPerson && !was {
		// Sessions and links from before may have been handed to a
		// program (`hostlink console --print`): under confirm_in_person
		// the console is only the person's.
		c.srv.EndSessions()
	}
	slog.Info("configuration reloaded", "by", by, "config", d.pol.cfgPath, "policy", summary)
	return apitype.ReloadResult{Config: d.pol.cfgPath, Policy: summary, RestartNeeded: restart}, nil
}

// checkPolicyWorkdirs refuses overrides for workdirs this daemon does not
// serve (the configuration's own check knows only the file's workdirs).
func (d *Daemon) checkPolicyWorkdirs(p config.Policy) error {
	for alias := range p.Workdirs {
		found := false
		for _, wd := range d.Files.Workdirs() {
			if wd.Alias == alias {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("policy.workdirs.%s: no workdir has that alias", alias)
		}
	}
	return nil
}

// policySummary is the policy as the audit log and `hostlink reload` show
// it: modes and rule counts, not the rules' text.
func policySummary(p config.Policy) map[string]any {
	b, _ := json.Marshal(PolicyConfig(p))
	out := map[string]any{"modes": p.Modes(), "allow_commands": len(p.AllowCommands), "allow_paths": len(p.AllowPaths),
		"approval_timeout_seconds": p.ApprovalTimeoutSeconds, "wait_seconds": p.WaitSeconds,
		"approve_in_client": p.ApproveInClient, "confirm_in_person": p.ConfirmInPerson,
		"policy_sha256": approvals.Digest(json.RawMessage(b))}
	var wds []string
	for alias := range p.Workdirs {
		wds = append(wds, alias)
	}
	if len(wds) > 0 {
		out["workdir_overrides"] = wds
	}
	return out
}

// protectedDirs are hostlink's own directories: configuration (with the
// policy), state (tokens, keys, databases), the audit log, logs and
// runtime sockets. No file operation may reach into them, whatever
// workdir contains them.
func (d *Daemon) protectedDirs() []string { return protectedDirs(d.Dirs) }

func protectedDirs(dirs paths.Dirs) []string {
	return []string{dirs.Config, dirs.State, dirs.Audit, dirs.Logs, dirs.Runtime}
}

// protectedPaths are protectedDirs, the configuration file read from
// configFile (wherever --config put it) and the platform token file: no
// file operation or command may read or change them.
func (d *Daemon) protectedPaths() []string { return protectedPaths(d.Dirs, d.Config, d.configFile) }

func protectedPaths(dirs paths.Dirs, cfg *config.Config, configFile string) []string {
	out := protectedDirs(dirs)
	for _, f := range []string{configFile, cfg.Link.TokenFile} {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ownFiles are hostlink's program, autostart unit and shell completions
// (autostart.OwnFiles): file operations and commands may read them,
// never change them.
func ownFiles(dirs paths.Dirs) []string {
	home, _ := os.UserHomeDir()
	return autostart.OwnFiles(dirs, home, os.Getenv)
}

// checkWorkdir refuses a workdir that is one of hostlink's own directories
// or inside one.
func (d *Daemon) checkWorkdir(path string) error {
	canon, err := filepath.EvalSymlinks(path)
	if err != nil {
		canon = filepath.Clean(path)
	}
	for _, p := range d.protectedDirs() {
		for _, form := range []string{filepath.Clean(p), evalOr(p)} {
			rel, err := filepath.Rel(form, canon)
			if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
				return fmt.Errorf("%s is inside hostlink's own directory %s, which no operation may reach", path, p)
			}
		}
	}
	return nil
}

func evalOr(p string) string {
	if c, err := filepath.EvalSymlinks(p); err == nil {
		return c
	}
	return filepath.Clean(p)
}

// approveFolder decides whether a platform session may work in root, the
// folder it selected, before its session starts: [policy]
// platform_folders. Under ask the user approves each folder once (for
// this daemon's life); the platform is answered APPROVAL_PENDING at once
// (the link's session manager must not wait) and activates again once
// approved. A configured workdir is the user's own choice already.
func (d *Daemon) approveFolder(root string) error {
	mode := d.Policy().PlatformFolders
	if mode == policy.Allow {
		return nil
	}
	if mode == policy.Deny {
		return errcode.New(policy.CodeDenied, "the local policy denies platform sessions a folder (platform_folders = deny)")
	}
	for _, wd := range d.Files.Workdirs() {
		if wd.Root.Dir() == root {
			return nil
		}
	}
	// What is approved is the directory, by its canonical path and
	// identity (rootgrant's fingerprint): another directory put at the
	// path later is asked about anew.
	dir, err := rootgrant.Check(root)
	if err != nil {
		return err
	}
	d.pol.foldersMu.Lock()
	defer d.pol.foldersMu.Unlock()
	if d.pol.folders[dir.Fingerprint] {
		return nil
	}
	act := approvals.Action{Op: "platform_folder", Class: string(policy.PlatformFolders), Transport: audit.Link,
		Summary: "a platform session may work in " + root,
		Fields: []approvals.Field{{Label: "Folder", Value: root},
			{Label: "Means", Value: "the platform may use this folder as its session's root, under the policy's rules for files and commands"}},
		SHA256: approvals.Digest(map[string]any{"op": "platform_folder", "root": root, "fingerprint": dir.Fingerprint})}
	if _, err := d.Approvals().Check(act); err != nil {
		return err
	}
	if d.pol.folders == nil {
		d.pol.folders = map[string]bool{}
	}
	d.pol.folders[dir.Fingerprint] = true
	return nil
}
