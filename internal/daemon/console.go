package daemon

import (
	"sync/atomic"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/console"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/pairing"
)

// CodeConsoleUnavailable: no web console is served (the daemon serves no
// HTTP endpoint), or, under confirm_in_person, the daemon could not open
// it in a browser.
const CodeConsoleUnavailable errcode.Code = "CONSOLE_UNAVAILABLE"

// consoleAt is the console being served and its origin.
type consoleAt struct {
	srv    *console.Server
	origin string // "http://127.0.0.1:7717"
}

// consoleHolder holds the console once ServeHTTP serves it.
type consoleHolder struct{ p atomic.Pointer[consoleAt] }

// consoleHandler is the web console, served beside MCP at console.Prefix.
// Its sessions come only from ConsoleLogin's one-time links, never from
// the MCP token.
func (d *Daemon) consoleHandler(origin string) *console.Server {
	srv := console.New(console.Options{
		Broker:    d.Approvals(),
		Registry:  d.Registry,
		AuditDir:  d.Dirs.Audit,
		AuditHead: d.Dirs.AuditHead(),
		AuditKey:  func() ([]byte, error) { return audit.LoadOrCreateKey(d.Dirs.AuditKey()) },
		Audit:     d.Audit,
		Refusals:  d.Refusals,
		Instance:  d.Dirs.State,
		Status:    func() any { return d.Status() },
		SaveGrant: d.SaveGrant,
		Thumbs:    d.thumbs,
		Sessions:  d.sessions,
		Policy: func() any {
			p := d.Policy()
			return map[string]any{"default": p.Default, "workdirs": p.Workdirs,
				"approval_timeout": p.Timeout.String(), "wait": p.Wait.String(),
				"approve_in_client": p.ApproveInClient, "confirm_in_person": p.ConfirmInPerson}
		},
	})
	d.console.p.Store(&consoleAt{srv, origin})
	return srv
}

// ConsoleLogin makes a one-time login link to the console for the local
// user who asked on the control channel (`hostlink console`): the only way
// into the console, so that whoever holds only the MCP token, a link or
// companion credential, or anything a command or the jail can read, never
// opens it. Under confirm_in_person the link is not returned: the daemon
// opens it in the browser itself, so that the console stays a surface
// that needs the person at the desktop even though any program running as
// the user can call this.
func (d *Daemon) ConsoleLogin() (apitype.ConsoleLogin, error) {
	c := d.console.p.Load()
	if c == nil {
		return apitype.ConsoleLogin{}, errcode.New(CodeConsoleUnavailable, "this hostlink serves no web console (it runs without its HTTP endpoint)")
	}
	p, expires := c.srv.NewLogin()
	url := c.origin + p
	if !d.Approvals().ConfirmInPerson() {
		return apitype.ConsoleLogin{URL: url, ExpiresAt: expires}, nil
	}
	if err := pairing.OpenBrowser(url); err != nil {
		return apitype.ConsoleLogin{}, errcode.New(CodeConsoleUnavailable, "confirm_in_person is on, so the daemon opens the console in a browser itself, and it could not: %v", err)
	}
	return apitype.ConsoleLogin{Opened: true, ExpiresAt: expires}, nil
}
