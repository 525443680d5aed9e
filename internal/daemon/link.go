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

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/link"
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
// never changes the configuration: each session gets its own registry,
// assembled like the configured workdirs'.
func (d *Daemon) StartLink(ctx context.Context, o LinkOptions) (wait func(), err error) {
	tok, tokens, err := d.linkAuth(ctx, o.URL, o.TokenFile)
	if err != nil {
		return nil, err
	}
	lo, err := d.LinkOptions(o)
	if err != nil {
		return nil, err
	}
	lo.Token, lo.Tokens = tok, tokens
	svc, err := link.New(lo)
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

// LinkOptions are the link's options over this daemon, without its token:
// sessions open through SessionRuntime, the control connection's browser
// and records go through the configured workdirs' registry. Tests that
// run a link against a development platform use them too.
func (d *Daemon) LinkOptions(o LinkOptions) (link.Options, error) {
	secret, err := audit.LoadOrCreateKey(d.Dirs.AuditKey())
	if err != nil {
		return link.Options{}, fmt.Errorf("machine secret: %w", err)
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
	return link.Options{
		URL: o.URL, Info: d.Info, Local: local, Shell: d.Commands != nil, Agents: d.Agents != nil,
		CommandsDenied: d.linkCommandsDenied, ShellSandbox: d.SandboxStatus, ComputerUse: o.ComputerUse, NewRuntime: d.SessionRuntime, Secret: secret,
		Control: d.Registry, Browse: d.browse,
		Session: o.Session, LegacyRoot: legacyRoot,
		IdemPath: filepath.Join(d.Dirs.State, "link.db"),
		AuditBytes: func() int64 {
			fi, err := os.Stat(d.Audit.Path())
			if err != nil {
				return 0
			}
			return fi.Size()
		},
		Log: slog.Default(),
	}, nil
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

// SessionRuntime opens one platform session's runtime: a jail on root and
// a registry of its own, assembled like the configured workdirs' (same
// audit log, policy, budgets, writer leases, command output store and
// registrations), so sessions are isolated from one another and from the
// configured workdirs but never policed differently.
func (d *Daemon) SessionRuntime(root string) (*link.Runtime, error) {
	if err := d.checkWorkdir(root); err != nil {
		return nil, errcode.New(errcode.DirectoryUnavailable, "the folder is inside hostlink's own configuration or state")
	}
	if err := d.approveFolder(root); err != nil {
		return nil, err
	}
	jr, err := jail.Open(root, jail.Options{Protected: d.protectedPaths(), Guarded: ownFiles(d.Dirs)})
	if err != nil {
		return nil, err
	}
	a := d.assemble(d.newFiles([]*files.Workdir{{Alias: sessionAlias, Description: "platform session root", Root: jr}}))
	rt := &link.Runtime{Registry: a.reg, Root: jr.Dir(), Shell: a.commands != nil, Computer: d.Computer != nil, Close: func() {
		d.assembled.remove(a)
		jr.Close()
	}}
	if d.Computer != nil {
		rt.Supports = d.Computer.Supports
	}
	return rt, nil
}

// sessionAlias is the workdir alias of a platform session's folder in its
// own registry: the policy judges the session's actions as in that workdir.
const sessionAlias = "session"

// linkCommandsDenied reports whether the policy in force denies commands
// in a platform session: the mode the policy decides by in the session's
// workdir.
func (d *Daemon) linkCommandsDenied() bool {
	p := d.Policy()
	return p.Mode(policy.Commands, sessionAlias) == policy.Deny
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

// linkStatus is the link's part of Status.
func (d *Daemon) linkStatus() apitype.LinkStatus {
	svc := d.link.get()
	if svc == nil {
		return apitype.LinkStatus{State: "not_configured", Reason: "no platform link is configured"}
	}
	st := svc.Status()
	out := apitype.LinkStatus{State: "offline", Detail: &st}
	c := st.Control
	if c == nil {
		c = st.Legacy
	}
	if c != nil {
		out.State, out.Reason = c.State, c.LastError
	}
	return out
}
