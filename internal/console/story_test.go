package console_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/tstest"
)

// client is one MCP client session as the daemon's transport identifies
// it: a measured peer with the client's declared name, and a session key.
type client struct {
	d      *daemon.Daemon
	caller ops.Caller
}

func newClient(d *daemon.Daemon, name string) *client {
	return &client{d, ops.Caller{Transport: audit.MCPHTTP, Peer: name, Session: ops.NewSessionKey(audit.MCPHTTP)}}
}

type result struct {
	out  map[string]any
	code errcode.Code
}

// call runs op in the background, as the client's request would; the call
// waits for the user's approval where the policy asks.
func (c *client) call(op string, args any) chan result {
	ch := make(chan result, 1)
	go func() {
		b, _ := json.Marshal(args)
		out, err := c.d.Registry.Call(context.Background(), c.caller, op, b, nil)
		res := result{out: map[string]any{}, code: errcode.CodeOf(err)}
		if err == nil {
			b, _ := json.Marshal(out)
			json.Unmarshal(b, &res.out)
		}
		ch <- res
	}()
	return ch
}

func (c *client) write(path, content string) chan result {
	return c.call("write_file", map[string]any{"path": path, "content": content})
}

// done waits for a call's result.
func done(t *testing.T, ch chan result, what string) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not return", what)
	}
	return result{}
}

// pendingOf waits for the pending approval whose summary holds s.
func pendingOf(t *testing.T, b *approvals.Broker, s string) approvals.Approval {
	t.Helper()
	var a approvals.Approval
	tstest.WaitFor(t, time.Minute, "a pending approval for "+s, func() bool {
		for _, p := range b.List(true) {
			if strings.Contains(p.Action.Summary, s) {
				a = p
				return true
			}
		}
		return false
	})
	return a
}

// TestBrowserApprovalStory drives the console in headless Chromium on
// the default policy (writes and input ask): a pending write_file shows
// its diff and a computer_act its marked observation; "this session"
// lets that client's next two writes run unasked while another client's
// write still asks; revoking ends that; a denial and a batch approval
// reach the waiting calls. Every page is kept as a screenshot.
func TestBrowserApprovalStory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Chromium and Xvfb run in CI on Linux")
	}
	x := xvfbtest.Start(t, 800, 600)
	t.Setenv("DISPLAY", x.Name)
	t.Setenv("WAYLAND_DISPLAY", "")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	d, base := serveDaemonWith(t, "[commands]\nenabled = true\n[computer]\nenabled = true\nsettle_ms = 10\n[policy]\nwait_seconds = 120\n")
	root := d.Files.Workdirs()[0].Root.Dir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	x.Xterm("hostlink story", 40, 40, root) // something to see on the screen
	b := d.Approvals()
	ctx := browser(t)
	pageShot := shooter(t)
	shot := func(name string) chromedp.Action[chromedp.Void] { return pageShot("story-" + name) }
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	logIn(t, ctx, base, d, shot)

	claude := newClient(d, "claude-code 2.1.197 (127.0.0.1:50628)")
	codex := newClient(d, "codex 0.58 (127.0.0.1:50700)")

	// A write that changes a line shows the change as a diff.
	first := claude.write("notes.txt", "one\n2\nthree\n")
	w := pendingOf(t, b, "notes.txt")
	card := "article#" + w.ID
	do("the write's card", chromedp.WaitVisible(chromedp.CSS(card+" pre.diff span.add")))
	if del, add := text(card+" pre.diff span.del"), text(card+" pre.diff span.add"); del != "-two" || add != "+2" {
		t.Errorf("the diff shows -%q +%q", del, add)
	}

	// An act on the screen shows the observation with the click marked.
	obs := done(t, claude.call("computer_observe", map[string]any{}), "computer_observe")
	obsID, _ := obs.out["observation_id"].(string)
	if obsID == "" {
		t.Fatalf("computer_observe: %+v", obs)
	}
	act := claude.call("computer_act", map[string]any{"observation_id": obsID, "action": "click", "x": 200, "y": 150})
	a := pendingOf(t, b, "computer_act")
	do("the act's card", chromedp.WaitVisible(chromedp.CSS("article#"+a.ID)))
	loaded := `(function(){var i=document.querySelector("article#` + a.ID + ` img.marked"); return !!i && i.complete && i.naturalWidth > 0})()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](loaded, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Errorf("the act's card shows no marked image: %v", err)
	}
	do("the pending approvals", shot("approvals-pending"))

	// Approve the write for this session: it runs, and so do the next two
	// writes of the same client, unasked; another client's write asks.
	do("approve for this session",
		chromedp.Click(chromedp.ID("scope-"+w.ID+"-session")),
		chromedp.Click(chromedp.CSS(card+" button.approve")),
		chromedp.WaitNotPresent(chromedp.CSS(card)))
	if r := done(t, first, "the approved write"); r.code != "" {
		t.Fatalf("the approved write: %s", r.code)
	}
	// The page says what the click did.
	if f := text("#decided"); !strings.Contains(f, "Approved") || !strings.Contains(f, "notes.txt") || !strings.Contains(f, "lets more like it run unasked") {
		t.Errorf("after approving, the page says %q", f)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if r := done(t, claude.write(f, "by claude\n"), "a write in the session"); r.code != "" {
			t.Fatalf("write %s in the granted session: %s", f, r.code)
		}
	}
	other := codex.write("c.txt", "by codex\n")
	c := pendingOf(t, b, "c.txt")
	do("the grant and the other client's write",
		chromedp.WaitVisible(chromedp.CSS("article#"+c.ID)),
		chromedp.WaitVisible(chromedp.CSS("#grant-table button.revoke")),
		shot("approvals-session-grant"))
	if g := text("#grant-table"); !strings.Contains(g, "files_write") || !strings.Contains(g, "claude-code") {
		t.Errorf("the grant shows %q", g)
	}
	grants := b.Grants()
	if len(grants) != 1 || grants[0].Uses != 2 {
		t.Fatalf("grants %+v", grants)
	}

	// Revoked: the client's next write asks again.
	do("revoke", chromedp.Click(chromedp.CSS("#grant-table button.revoke")), chromedp.WaitVisible(chromedp.ID("no-grants")))
	again := claude.write("d.txt", "asked again\n")
	dd := pendingOf(t, b, "d.txt")

	// Deny the act: the waiting call is refused.
	do("deny the act",
		chromedp.WaitVisible(chromedp.CSS("article#"+dd.ID)),
		chromedp.Click(chromedp.CSS("article#"+a.ID+" button.deny")),
		chromedp.WaitNotPresent(chromedp.CSS("article#"+a.ID)))
	if r := done(t, act, "the denied act"); r.code != approvals.CodeDenied {
		t.Fatalf("the denied act: %q", r.code)
	}

	// Approve both waiting writes at once.
	do("batch approve",
		chromedp.WaitVisible(chromedp.ID("pick-"+c.ID)),
		chromedp.Click(chromedp.ID("pick-"+c.ID)),
		chromedp.Click(chromedp.ID("pick-"+dd.ID)),
		shot("approvals-batch"),
		chromedp.Click(chromedp.ID("approve-selected")),
		chromedp.WaitVisible(chromedp.ID("none-pending")))
	for _, ch := range []chan result{other, again} {
		if r := done(t, ch, "a batch-approved write"); r.code != "" {
			t.Fatalf("a batch-approved write: %s", r.code)
		}
	}
	for f, want := range map[string]string{"notes.txt": "one\n2\nthree\n", "a.txt": "by claude\n", "c.txt": "by codex\n", "d.txt": "asked again\n"} {
		if got, err := os.ReadFile(filepath.Join(root, f)); err != nil || string(got) != want {
			t.Errorf("%s holds %q (%v), want %q", f, got, err, want)
		}
	}
	do("the decisions", chromedp.WaitVisible(chromedp.CSS("#decisions tr.used")), shot("approvals-decided"))
	decisions := text("#decisions")
	for _, want := range []string{"console session", "denied", "used"} {
		if !strings.Contains(decisions, want) {
			t.Errorf("recent decisions lack %q:\n%s", want, decisions)
		}
	}
	for _, x := range b.List(false) {
		if x.State != approvals.Pending && (x.Decided.Before(x.Created) || x.DecidedVia != "console") {
			t.Errorf("decision recorded as %+v", x)
		}
	}

	// A grant for writes below a directory, saved to the configuration:
	// the exact TOML is shown first, then written and reloaded.
	if err := os.Mkdir(filepath.Join(root, "saved"), 0o755); err != nil {
		t.Fatal(err)
	}
	saved := claude.write("saved/e.txt", "saved\n")
	e := pendingOf(t, b, "e.txt")
	do("approve writes below a directory",
		chromedp.WaitVisible(chromedp.CSS("article#"+e.ID)),
		chromedp.Click(chromedp.ID("scope-"+e.ID+"-path")),
		chromedp.Click(chromedp.CSS("article#"+e.ID+" button.approve")),
		chromedp.WaitNotPresent(chromedp.CSS("article#"+e.ID)))
	if r := done(t, saved, "the write granted by path"); r.code != "" {
		t.Fatalf("the write granted by path: %s", r.code)
	}
	do("preview the saved grant",
		chromedp.WaitVisible(chromedp.CSS("#grant-table a.save")),
		chromedp.Click(chromedp.CSS("#grant-table a.save")),
		chromedp.WaitVisible(chromedp.ID("toml")),
		shot("save-grant"))
	toml := text("#toml")
	if !strings.Contains(toml, "allow_paths = ['saved/**/*']") {
		t.Errorf("the TOML shown: %q", toml)
	}
	do("save the grant", chromedp.Click(chromedp.ID("save")), chromedp.WaitVisible(chromedp.ID("saved")))
	cfg, _ := os.ReadFile(filepath.Join(d.Dirs.Config, "config.toml"))
	if !strings.Contains(string(cfg), strings.TrimSpace(toml)) {
		t.Errorf("config.toml after saving:\n%s\nwant it to hold:\n%s", cfg, toml)
	}

	// An act approved once runs; the desktop page shows the observation it
	// was made on, as a thumbnail, with the act.
	obs = done(t, claude.call("computer_observe", map[string]any{}), "computer_observe")
	obsID, _ = obs.out["observation_id"].(string)
	moved := claude.call("computer_act", map[string]any{"observation_id": obsID, "action": "move", "x": 300, "y": 200})
	m := pendingOf(t, b, "computer_act")
	do("approve the move once",
		chromedp.Navigate(base+"/console/approvals"),
		chromedp.WaitVisible(chromedp.CSS("article#"+m.ID)),
		chromedp.Click(chromedp.CSS("article#"+m.ID+" button.approve")),
		chromedp.WaitNotPresent(chromedp.CSS("article#"+m.ID)))
	if r := done(t, moved, "the approved act"); r.code != "" {
		t.Fatalf("the approved act: %s", r.code)
	}
	do("the desktop page", chromedp.Navigate(base+"/console/desktop"), chromedp.WaitVisible(chromedp.CSS("article#"+obsID+" img.thumb")))
	thumbLoaded := `(function(){var i=document.querySelector("article#` + obsID + ` img.thumb"); return i.complete && i.naturalWidth > 0})()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](thumbLoaded, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Errorf("the observation's thumbnail did not load: %v", err)
	}
	if acts := text("article#" + obsID + " table"); !strings.Contains(acts, "computer_act") || !strings.Contains(acts, "OK") {
		t.Errorf("the observation's acts: %q", acts)
	}

	// The other pages, each kept as a screenshot.
	for _, p := range []struct{ path, wait, name string }{
		{"/console/approvals/" + a.ID, "#state", "approval-denied-act"},
		{"/console/sessions", "#session-table tbody tr", "sessions"},
		{"/console/activity", "#rows tr", "activity"},
		{"/console/activity?class=files_write&result=ok", "#rows tr", "activity-filtered"},
		{"/console/audit?verify=1", "#verify", "audit"},
		{"/console/status", "#policy", "status"},
		{"/console/desktop", "main h1", "desktop"},
		{"/console/commands", "main h1", "commands"},
	} {
		do(p.path, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait)), shot(p.name))
	}
	do("a session's timeline",
		chromedp.Navigate(base+"/console/sessions"),
		chromedp.Click(chromedp.CSS("#session-table tbody a")),
		chromedp.WaitVisible(chromedp.CSS("#rows tr")),
		shot("session-timeline"))
	if tl := text("#rows"); !strings.Contains(tl, "write_file") {
		t.Errorf("the timeline shows %q", tl)
	}
}
