package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/tstest"
)

// chromium finds Debian's Chromium; without it the test fails where
// integration tests are required (CI) and is skipped elsewhere.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	tstest.Missing(t, "chromium is not installed (.ci/run installs Debian's chromium)")
	return ""
}

// serveDaemon runs a daemon with commands on and asking, and returns it
// with its console's base URL.
func serveDaemon(t *testing.T) (*daemon.Daemon, string) {
	return serveDaemonWith(t, "[commands]\nenabled = true\n[policy]\ncommands = \"ask\"\nwait_seconds = 120\n")
}

// serveDaemonWith runs a daemon with the configuration cfg.
func serveDaemonWith(t *testing.T, cfg string) (*daemon.Daemon, string) {
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Open(daemon.Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- d.ServeHTTP(ctx, func(a net.Addr) { ready <- a }) }()
	t.Cleanup(func() { cancel(); <-done; d.Close() })
	select {
	case a := <-ready:
		return d, "http://" + a.String()
	case err := <-done:
		t.Fatal(err)
	}
	return nil, ""
}

// browser starts headless Chromium for the test.
func browser(t *testing.T) context.Context {
	chrome := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// artifacts is where the console's screenshots go: $HOSTLINK_ARTIFACTS,
// else a temporary directory.
func artifacts(t *testing.T) string {
	if dir := os.Getenv("HOSTLINK_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// shooter returns an action that saves a full-page screenshot as
// console-NAME.png in the artifacts directory.
func shooter(t *testing.T) func(name string) chromedp.Action[chromedp.Void] {
	dir := artifacts(t)
	return func(name string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			buf, err := chromedp.FullScreenshot(100)(ctx, tg)
			if err != nil {
				return chromedp.Void{}, err
			}
			t.Logf("screenshot %s", filepath.Join(dir, "console-"+name+".png"))
			return chromedp.Void{}, os.WriteFile(filepath.Join(dir, "console-"+name+".png"), buf, 0o644)
		}
	}
}

// logIn logs the browser in as `hostlink console` does, with a one-time
// link from the daemon, and waits for the approvals page; the same link
// used again logs nobody in.
func logIn(t *testing.T, ctx context.Context, base string, d *daemon.Daemon, shot func(string) chromedp.Action[chromedp.Void]) {
	l, err := d.ConsoleLogin()
	if err != nil || !strings.HasPrefix(l.URL, base+"/console/login?code=") {
		t.Fatalf("console login link: %+v %v", l, err)
	}
	for i, step := range []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base + "/console/"),
		chromedp.WaitVisible(chromedp.ID("instance")),
		shot("login"),
		chromedp.Navigate(l.URL),
		chromedp.WaitVisible(chromedp.ID("none-pending")),
	} {
		if err := chromedp.Do(ctx, step); err != nil {
			t.Fatalf("login, step %d: %v", i, err)
		}
	}
	// The address bar no longer holds the code.
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || loc != base+"/console/approvals" {
		t.Fatalf("after login the browser is at %q (%v)", loc, err)
	}
}

// runCommand calls run_command as a remote client would, in the
// background; the call waits for the user's approval.
func runCommand(d *daemon.Daemon, words ...string) chan map[string]any {
	ch := make(chan map[string]any, 1)
	go func() {
		args, _ := json.Marshal(map[string]any{"argv": words})
		out, err := d.Registry.Call(context.Background(), ops.Caller{Transport: "mcp-http", Peer: "127.0.0.1:1"}, "run_command", args, nil)
		res := map[string]any{}
		if err != nil {
			res["code"] = string(errcode.CodeOf(err))
		} else {
			b, _ := json.Marshal(out)
			json.Unmarshal(b, &res)
		}
		ch <- res
	}()
	return ch
}

func pendingFor(t *testing.T, b *approvals.Broker, summary string) approvals.Approval {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, a := range b.List(true) {
			if strings.Contains(a.Action.Summary, summary) {
				return a
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pending approval for %q", summary)
	return approvals.Approval{}
}

// TestBrowser drives the console in headless Chromium: log in with a
// one-time link, see a pending command approval appear, approve it, and see the
// command's output; a cross-origin form post and a framed console are
// refused.
func TestBrowser(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Chromium runs in CI on Linux")
	}
	d, base := serveDaemon(t)
	ctx := browser(t)
	shot := shooter(t)
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	logIn(t, ctx, base, d, shot)

	// A pending command approval appears without a reload, is approved
	// with one click, and the waiting call runs.
	result := runCommand(d, "echo", "hello-from-the-console")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("article.approval")), shot("approvals")); err != nil {
		t.Fatalf("pending approval: %v", err)
	}
	if body := text("article.approval"); !strings.Contains(body, "echo hello-from-the-console") || !strings.Contains(body, d.Files.Workdirs()[0].Root.Dir()) {
		t.Fatalf("the approval does not show the command and its directory:\n%s", body)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("article.approval button.approve"))); err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	select {
	case res = <-result:
	case <-time.After(60 * time.Second):
		t.Fatal("the approved command did not run")
	}
	id, _ := res["capture_id"].(string)
	if id == "" {
		t.Fatalf("run_command after approval: %v", res)
	}
	link := chromedp.CSS(`a[href="/console/commands/` + id + `"]`)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/commands"),
		chromedp.WaitVisible(link),
		shot("commands"),
		chromedp.Click(link),
		chromedp.WaitVisible(chromedp.ID("stdout")),
		shot("command-output"),
	); err != nil {
		t.Fatalf("command output: %v", err)
	}
	if out := text("#stdout"); !strings.Contains(out, "hello-from-the-console") {
		t.Fatalf("stdout shown: %q", out)
	}
	if a := d.Approvals().List(false)[0]; a.DecidedVia != "console" || !strings.HasPrefix(a.DecidedBy, "console session ") {
		t.Fatalf("decision recorded as %q via %q", a.DecidedBy, a.DecidedVia)
	}

	// The other pages, for the record.
	for _, p := range []struct{ path, wait, name string }{
		{"/console/activity", "#rows tr", "activity"},
		{"/console/audit?verify=1", "#verify", "audit"},
		{"/console/status", "main table", "status"},
		{"/console/desktop", "main h1", "desktop"},
		{"/console/agents", "main h1", "agents"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait)), shot(p.name)); err != nil {
			t.Fatalf("%s: %v", p.path, err)
		}
	}
	chromedp.Do(ctx, chromedp.Navigate(base+"/console/audit?verify=1"), chromedp.WaitVisible(chromedp.ID("verify")))
	if v := text("#verify"); !strings.Contains(v, "Chain verified") {
		t.Errorf("audit verification shows %q", v)
	}

	// Another origin (another port is another origin) posts a forged
	// approval with the logged-in browser: refused, still pending.
	pendingResult := runCommand(d, "echo", "forged")
	p := pendingFor(t, d.Approvals(), "echo forged")
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/post":
			fmt.Fprintf(w, `<form id="f" method="post" action="%s/console/approvals/%s/decide"><input name="csrf" value="guess"><input name="decision" value="approve"></form><script>document.getElementById("f").submit()</script>`, base, p.ID)
		case "/frame":
			fmt.Fprintf(w, `<p>framing</p><iframe id="c" src="%s/console/approvals" width="800" height="600"></iframe>`, base)
		}
	}))
	defer evil.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(evil.URL+"/post"), chromedp.Sleep(time.Second), chromedp.WaitVisible(chromedp.CSS("body"))); err != nil {
		t.Fatal(err)
	}
	if a, _ := d.Approvals().Get(p.ID); a.State != approvals.Pending {
		t.Fatalf("a cross-origin post decided the approval: %+v", a)
	}
	if refused := text("body"); !strings.Contains(refused, "cross-origin requests are refused") {
		t.Errorf("the cross-origin post was answered %q", refused)
	}

	// A page of another origin frames the console: the browser refuses to
	// show it (frame-ancestors 'none', X-Frame-Options DENY).
	if err := chromedp.Do(ctx, chromedp.Navigate(evil.URL+"/frame"), chromedp.WaitVisible(chromedp.ID("c")), chromedp.Sleep(time.Second), shot("framed")); err != nil {
		t.Fatal(err)
	}
	tree, err := chromedp.Run(ctx, chromedp.Action[*page.FrameTree](func(ctx context.Context, tg *chromedp.Target) (*page.FrameTree, error) {
		r, err := cdp.Call(ctx, tg, page.GetFrameTree, cdp.Empty{})
		return r.FrameTree, err
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.ChildFrames) != 1 {
		t.Fatalf("frames: %+v", tree)
	}
	child := tree.ChildFrames[0].Frame
	if strings.HasPrefix(child.URL, base) && child.UnreachableURL == "" {
		t.Fatalf("the console loaded in a frame of another origin: %+v", child)
	}
	t.Logf("framed console: url %q unreachable %q", child.URL, child.UnreachableURL)
	d.Approvals().Decide(p.ID, false, "test", "test")
	<-pendingResult
}
