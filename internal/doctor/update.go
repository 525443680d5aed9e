package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/update"
	"github.com/hostlink/hostlink/internal/version"
)

// checkUpdate reports the update check: off (the default), or whether a
// newer release is out, as the running daemon last found, else checked
// now.
func (e *env) checkUpdate(ctx context.Context) {
	u := e.cfg.Update
	if !u.Check {
		e.add("update check", OK, "off (turn it on with [update] check = true; or run hostlink update --check)", "")
		return
	}
	var st *apitype.UpdateStatus
	if e.status != nil && e.status.Update != nil && e.status.Update.CheckedAt != nil {
		st = e.status.Update
	} else {
		signers := update.ReleaseSigners()
		if u.AllowedSigners != "" {
			var err error
			if signers, err = update.LoadSigners(u.AllowedSigners); err != nil {
				e.add("update check", Warn, err.Error(), "correct [update] allowed_signers in "+e.configPath)
				return
			}
		}
		exe, _ := os.Executable()
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		c := &update.Checker{URL: u.URL, Signers: signers, Current: version.Version, Command: update.UpdateCommand(exe)}
		s := c.Check(ctx)
		st = &s
	}
	switch {
	case st.Error != "":
		e.add("update check", Warn, "the last check failed: "+st.Error, "check the network, or [update] url in "+e.configPath)
	case st.Available:
		e.add("update check", Warn, fmt.Sprintf("hostlink %s is available (this is %s)", st.Latest, st.Current), st.Command)
	default:
		if _, ordered := update.Compare(st.Current, st.Latest); !ordered {
			e.add("update check", OK, fmt.Sprintf("the latest release is %s; this is a development build (%s)", st.Latest, st.Current), "")
			return
		}
		e.add("update check", OK, fmt.Sprintf("up to date: the latest release is %s", st.Latest), "")
	}
}
