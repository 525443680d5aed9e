package daemon

import (
	"net/http"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/console"
)

// consoleHandler is the web console, served beside MCP at console.Prefix
// and behind the same token.
func (d *Daemon) consoleHandler(token string) http.Handler {
	return console.New(console.Options{
		Token:     token,
		Broker:    d.Approvals(),
		Registry:  d.Registry,
		AuditDir:  d.Dirs.Audit,
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
				"approval_timeout": p.Timeout.String(), "wait": p.Wait.String()}
		},
	})
}
