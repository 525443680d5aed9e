package console_test

import (
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
	"github.com/hostlink/hostlink/internal/update/updatetest"
	"github.com/hostlink/hostlink/internal/version"
)

// TestStatusPageUpdate runs a daemon with the update check on against a
// newer signed release: its status reports it, and the console's status
// page says so and how to update; with the check off (the default) the
// status has no update and the page says nothing of it.
func TestStatusPageUpdate(t *testing.T) {
	defer func(v string) { version.Version = v }(version.Version)
	version.Version = "1.0.0"
	rel, signers := updatetest.Release(t, "1.1.0")
	for _, on := range []bool{true, false} {
		cfg := ""
		if on {
			cfg = "[update]\ncheck = true\nurl = \"" + rel + "\"\nallowed_signers = \"" + filepath.ToSlash(signers) + "\"\n"
		}
		d, base := serveDaemonWith(t, cfg)
		if on {
			tstest.WaitFor(t, 30*time.Second, "the update check", func() bool {
				u := d.Status().Update
				return u != nil && u.CheckedAt != nil
			})
			if u := d.Status().Update; !u.Available || u.Latest != "1.1.0" || u.Current != "1.0.0" || u.Command == "" || u.Error != "" {
				t.Errorf("status update = %+v", u)
			}
		} else if u := d.Status().Update; u != nil {
			t.Errorf("with the check off, status update = %+v", u)
		}
		l, err := d.ConsoleLogin()
		if err != nil {
			t.Fatal(err)
		}
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		resp, err := c.Get(l.URL)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("login: %v %v", err, resp)
		}
		resp.Body.Close()
		page := get(t, c, base+"/console/status")
		if has := strings.Contains(page, `id="update"`); has != on {
			t.Errorf("check on: %v; the status page has the update notice: %v", on, has)
		}
		if on && !strings.Contains(page, "hostlink 1.1.0 is available (this is 1.0.0). To install it: <code>hostlink update</code>") {
			t.Errorf("the status page lacks the update notice:\n%s", page)
		}
	}
}
