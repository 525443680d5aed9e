package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/commands"
	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/link"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/private"
)

// TokenEnv names the environment variable that may carry the platform
// token when no token file is given.
const TokenEnv = "HOSTLINK_PLATFORM_TOKEN"

// LinkOptions configure the outbound platform link.
type LinkOptions struct {
	URL       string // control endpoint, wss:// (or ws:// to loopback)
	TokenFile string // file holding the bearer token; else $HOSTLINK_PLATFORM_TOKEN
	Session   string // legacy binding: connect straight to this session's data endpoint
	// ComputerUse reports whether a desktop backend is ready, and the
	// screen size; nil means the daemon's own probe (when computer use is
	// enabled locally).
	ComputerUse func() (bool, [2]int)
}

// StartLink connects out to the platform and keeps the link up until ctx
// is done; the returned wait blocks until it has stopped. The platform
// never changes the configuration: each session gets its own runtime.
func (d *Daemon) StartLink(ctx context.Context, o LinkOptions) (wait func(), err error) {
	tok, tokens, err := d.linkAuth(ctx, o.URL, o.TokenFile)
	if err != nil {
		return nil, err
	}
	secret, err := audit.LoadOrCreateKey(AuditKeyPath(d.Dirs))
	if err != nil {
		return nil, fmt.Errorf("machine secret: %w", err)
	}
	l := d.Config.Limits
	local := link.Limits{MaxFileSizeBytes: min(l.MaxReadBytes, l.MaxWriteBytes), CommandTimeoutSeconds: 30, MaxConcurrent: d.Config.Link.MaxConcurrent}
	if d.Commands != nil {
		local.CommandTimeoutSeconds = float64(d.Config.Commands.MaxTimeoutSeconds)
	}
	if o.ComputerUse == nil && d.Computer != nil {
		o.ComputerUse = d.ComputerUse
	}
	legacyRoot := ""
	if wds := d.Files.Workdirs(); len(wds) > 0 {
		legacyRoot = wds[0].Root.Dir()
	}
	svc, err := link.New(link.Options{
		URL: o.URL, Token: tok, Tokens: tokens, Info: d.Info, Local: local, Shell: d.Commands != nil, Agents: d.Agents != nil,
		CommandsDenied: d.linkCommandsDenied, ShellSandbox: d.SandboxStatus, ComputerUse: o.ComputerUse, NewRuntime: d.sessionRuntime, Secret: secret,
		Session: o.Session, LegacyRoot: legacyRoot,
		IdemPath: filepath.Join(d.Dirs.State, "link.db"),
		Event: func(op string, details map[string]any) {
			d.Audit.Append(audit.Record{Transport: link.Transport, Op: op, Code: "OK", Details: details})
		},
		AuditBytes: func() int64 {
			fi, err := os.Stat(d.Audit.Path())
			if err != nil {
				return 0
			}
			return fi.Size()
		},
		Log: slog.Default(),
	})
	if err != nil {
		return nil, err
	}
	d.link.set(svc)
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.Run(ctx)
	}()
	return func() { <-done }, nil
}

// linkToken reads the platform token from file, else the environment.
func linkToken(file string) (string, error) {
	if file == "" {
		tok := strings.TrimSpace(os.Getenv(TokenEnv))
		if tok == "" {
			return "", fmt.Errorf("platform link: give --platform-token-file or set %s", TokenEnv)
		}
		return tok, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("platform token: %w", err)
	}
	if err := private.Check(file); err != nil {
		return "", fmt.Errorf("platform token file %s: %w", file, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", errors.New("platform token file is empty")
	}
	return tok, nil
}

// sessionRuntime opens one session's runtime: a jail on root, a file
// service and a registry of its own (sharing the audit log and the command
// output store), so sessions are isolated from one another and from the
// configured workdirs.
func (d *Daemon) sessionRuntime(root string) (*link.Runtime, error) {
	if err := d.checkWorkdir(root); err != nil {
		return nil, errcode.New(errcode.DirectoryUnavailable, "the folder is inside hostlink's own configuration or state")
	}
	if err := d.approveFolder(root); err != nil {
		return nil, err
	}
	jr, err := jail.Open(root, jail.Options{Protected: d.protectedDirs()})
	if err != nil {
		return nil, err
	}
	l := d.Config.Limits
	fs := files.NewService([]*files.Workdir{{Alias: sessionAlias, Description: "platform session root", Root: jr}}, files.Limits{
		MaxReadBytes:       l.MaxReadBytes,
		MaxWriteBytes:      l.MaxWriteBytes,
		MaxListEntries:     l.MaxListEntries,
		MaxSearchMatches:   l.MaxSearchMatches,
		MaxSearchBytes:     l.MaxSearchBytes,
		MaxSearchFileBytes: l.MaxSearchFileBytes,
	})
	reg := ops.New(d.Audit, d.gate(fs))
	files.Register(reg, fs)
	var cmds *commands.Service
	if d.Commands != nil {
		cc := d.Config.Commands
		cmds = commands.New(fs, d.captures, commands.Options{
			MaxConcurrent:  cc.MaxConcurrent,
			DefaultTimeout: time.Duration(cc.DefaultTimeoutSeconds) * time.Second,
			MaxTimeout:     time.Duration(cc.MaxTimeoutSeconds) * time.Second,
			InlineBytes:    cc.InlineOutputBytes,
			Sandbox:        d.sandboxPolicy(),
		})
		commands.Register(reg, cmds)
		fs.SetCommandSandbox(d.sandboxDescription)
	}
	if d.Computer != nil {
		// The desktop is the machine's, not the session's: one service.
		desktop.Register(reg, d.Computer)
	}
	if d.Agents != nil {
		// So is the agent engine: its tasks run in the configured workdirs
		// the local user opened to agents, whatever folder the session has.
		agent.Register(reg, d.Agents)
	}
	return &link.Runtime{Registry: reg, Root: jr.Dir(), Shell: cmds != nil, Computer: d.Computer != nil, Close: func() {
		if cmds != nil {
			cmds.Close()
		}
		jr.Close()
	}}, nil
}

// sessionAlias is the workdir alias of a platform session's folder in its
// own registry: the policy judges the session's actions as in that workdir.
const sessionAlias = "session"

// linkCommandsDenied reports whether the policy in force denies commands
// in a platform session, as its gate would decide: the session workdir's
// own mode if the policy sets one, else the default's.
func (d *Daemon) linkCommandsDenied() bool {
	p := d.Policy()
	mode := p.Default.Modes[policy.Commands]
	if m := p.Workdirs[sessionAlias].Modes[policy.Commands]; m != "" {
		mode = m
	}
	return mode == policy.Deny
}

// linkHolder holds the running link, set once StartLink runs.
type linkHolder struct {
	mu  sync.Mutex
	svc *link.Service
}

func (h *linkHolder) set(s *link.Service) {
	h.mu.Lock()
	h.svc = s
	h.mu.Unlock()
}

func (h *linkHolder) get() *link.Service {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.svc
}

// linkDetail is the link's own status, shown under Status.Link.
type linkDetail = link.LinkStatus

// linkStatus is the link's part of Status.
func (d *Daemon) linkStatus() LinkStatus {
	svc := d.link.get()
	if svc == nil {
		return LinkStatus{State: "not_configured", Reason: "no platform link is configured"}
	}
	st := svc.Status()
	out := LinkStatus{State: "offline", Detail: &st}
	c := st.Control
	if c == nil {
		c = st.Legacy
	}
	if c != nil {
		out.State, out.Reason = c.State, c.LastError
	}
	return out
}
