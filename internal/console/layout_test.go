package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/tstest"
)

// layoutSizes are the windows every page is checked in: a laptop's and a
// desktop monitor's.
var layoutSizes = [][2]int64{{1280, 800}, {1920, 1080}}

// longPath is a path that must wrap in its column, at its slashes.
const longPath = "src/internal/very/deeply/nested/directory/structure/of/a/large/monorepo/package_with_a_rather_long_name_for_testing.go"

// pageCheck is what the layout test measures on a page, in the browser:
// the page's and every table's width against the window, each column's
// width (minimum, and the path column's), whether a short path shows on
// one line, and whether rows marked with data-seq, data-time or
// data-last are newest first.
const pageCheck = `(function(minPath) {
  var out = {page: document.documentElement.scrollWidth, window: document.documentElement.clientWidth, problems: []};
  document.querySelectorAll("main table, main pre, main dl, main form, main article, main img").forEach(function(el) {
    var r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > out.window + 1) out.problems.push(el.tagName + (el.id ? "#" + el.id : "") + " ends at " + Math.round(r.right) + "px");
  });
  document.querySelectorAll("main table").forEach(function(t) {
    var ths = t.querySelectorAll("thead th");
    if (!ths.length) ths = t.querySelectorAll("tr:first-child th");
    ths.forEach(function(th, i) {
      var w = th.getBoundingClientRect().width;
      if (w < 48) out.problems.push("table" + (t.id ? "#" + t.id : "." + t.className) + " column " + (i + 1) + " (" + th.textContent + ") is " + Math.round(w) + "px wide");
      if (t.classList.contains("rows") && th.textContent == "Path" && w < minPath) out.problems.push("the path column is " + Math.round(w) + "px wide, want " + minPath);
    });
  });
  document.querySelectorAll("td.path span.p").forEach(function(s) {
    var r = document.createRange(), lines = {};
    r.selectNodeContents(s);
    Array.prototype.forEach.call(r.getClientRects(), function(b) { if (b.width > 0) lines[Math.round(b.top)] = true; });
    if (s.textContent.length <= 24 && Object.keys(lines).length > 1) out.problems.push("the path " + s.textContent + " is broken over lines");
  });
  var order = function(sel, attr, strict) {
    var prev = null;
    document.querySelectorAll(sel).forEach(function(el) {
      var v = Number(el.getAttribute(attr));
      if (prev !== null && (strict ? v >= prev : v > prev)) out.problems.push(sel + " not newest first: " + attr + " " + v + " after " + prev);
      prev = v;
    });
  };
  order("#rows tr[data-seq]", "data-seq", true);
  order("#rows tr[data-time]", "data-time", false);
  order("#decisions tr[data-time]", "data-time", false);
  order("#session-table tr[data-last]", "data-last", false);
  order("#commands tr[data-time]", "data-time", false);
  out.rows = document.querySelectorAll("#rows tr[data-seq]").length;
  return out;
})`

type pageReport struct {
	Page     int      `json:"page"`
	Window   int      `json:"window"`
	Problems []string `json:"problems"`
	Rows     int      `json:"rows"`
}

// TestConsoleLayout fills a daemon with what a first hour leaves behind
// (MCP clients over HTTP, one of them real, with calls from several
// connections; many `hostlink` control calls; long paths; failures;
// commands; an agent task; desktop observations; grants in force and
// ended; decisions made out of request order; pending approvals) and
// checks every console page in headless Chromium at 1280×800 and
// 1920×1080: no horizontal overflow, no column squeezed (the path column
// wide enough, a short path on one line), and every list newest first.
// Each page is kept as a screenshot (console-layout-PAGE-WxH.png).
func TestConsoleLayout(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Chromium and Xvfb run in CI on Linux")
	}
	x := xvfbtest.Start(t, 800, 600)
	t.Setenv("DISPLAY", x.Name)
	t.Setenv("WAYLAND_DISPLAY", "")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	prog := filepath.Join(t.TempDir(), "fakeagent")
	if out, err := exec.Command("go", "build", "-o", prog, "../agent/fakeruntime/fakeagent").CombinedOutput(); err != nil {
		t.Fatalf("building the fake runtime: %v\n%s", err, out)
	}
	proj := t.TempDir()
	for _, p := range []string{"docs/p9.md", longPath, "README.md"} {
		os.MkdirAll(filepath.Join(proj, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(proj, p), []byte("text\n"), 0o644)
	}
	d, base := serveLayoutDaemon(t, daemon.Options{Listen: "127.0.0.1:0", Runtimes: map[string]agent.Factory{
		fakeruntime.Name: func() (agent.Runtime, error) { return &fakeruntime.Runtime{Argv: []string{prog}}, nil },
	}}, "[commands]\nenabled = true\n[computer]\nenabled = true\nsettle_ms = 10\n[agents]\nenabled = true\nruntimes = [\"fake\"]\n"+
		"[[workdirs]]\nalias = \"proj\"\npath = '"+proj+"'\nagent_mode = \"workspace-write\"\n"+
		"[[workdirs]]\nalias = \"documentation-archive-2026\"\npath = '"+t.TempDir()+"'\n"+
		"[policy]\nwait_seconds = 120\ncommands = \"allow\"\ncomputer = \"allow\"\nagents = \"allow\"\n")
	b := d.Approvals()
	x.Xterm("hostlink layout", 40, 40, proj)
	// Logged in before anything waits for approval (logIn expects none).
	ctx := browser(t)
	shot := shooter(t)
	logIn(t, ctx, base, d, func(string) chromedp.Action[chromedp.Void] {
		return func(context.Context, *chromedp.Target) (chromedp.Void, error) { return chromedp.Void{}, nil }
	})

	// Clients: each call of claude's and codex's session comes from a
	// connection of its own, as HTTP clients' calls do.
	port := 50000
	caller := func(name string) func() ops.Caller {
		key := ops.NewSessionKey(audit.MCPHTTP)
		return func() ops.Caller {
			port++
			return ops.Caller{Transport: audit.MCPHTTP, Peer: fmt.Sprintf("%s (127.0.0.1:%d)", name, port), Session: key}
		}
	}
	claude, codex := caller("claude-code 2.1.197"), caller("codex 0.58.0")
	call := func(c ops.Caller, op string, args map[string]any) chan result {
		ch := make(chan result, 1)
		go func() {
			raw, _ := json.Marshal(args)
			out, err := d.Registry.Call(context.Background(), c, op, raw, nil)
			res := result{out: map[string]any{}}
			if err != nil {
				res.code = errcode.CodeOf(err)
			} else {
				b, _ := json.Marshal(out)
				json.Unmarshal(b, &res.out)
			}
			ch <- res
		}()
		return ch
	}
	for _, p := range []string{"docs/p9.md", longPath, "README.md", "../outside.txt", "missing.txt"} {
		done(t, call(claude(), "read_file", map[string]any{"workdir": "proj", "path": p}), "read_file")
	}
	done(t, call(codex(), "list_directory", map[string]any{"workdir": "proj", "path": "src", "recursive": true}), "list_directory")
	done(t, call(codex(), "search_text", map[string]any{"workdir": "proj", "query": "text"}), "search_text")
	cmd := done(t, call(codex(), "run_command", map[string]any{"workdir": "proj", "command": "echo building the project with a rather long command line && ls -la docs src && false"}), "run_command")
	captureID, _ := cmd.out["capture_id"].(string)
	done(t, call(codex(), "run_command", map[string]any{"workdir": "proj", "argv": []string{"echo", "hello"}}), "run_command")
	// The local user's own controls: many, and no sessions of theirs.
	for i := range 30 {
		c := ops.Caller{Transport: audit.IPC, Peer: fmt.Sprintf("uid 1000 pid %d", 4000+i), Session: ops.NewSessionKey(audit.IPC)}
		done(t, call(c, []string{"approvals.list", "status"}[i%2], map[string]any{}), "a control call")
	}
	// An agent task, and the desktop.
	task := done(t, call(codex(), "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "proj", "prompt": "say hello from the layout test", "access": "read-only"}), "submit_agent_task")
	taskID, _ := task.out["task_id"].(string)
	if taskID == "" {
		t.Fatalf("submit_agent_task: %+v", task)
	}
	obs := done(t, call(claude(), "computer_observe", map[string]any{}), "computer_observe")
	if obsID, _ := obs.out["observation_id"].(string); obsID != "" {
		done(t, call(claude(), "computer_act", map[string]any{"observation_id": obsID, "action": "move", "x": 100, "y": 100}), "computer_act")
	}

	// Writes ask. A real HTTP client gets a "this session" grant, uses
	// it, and leaves: its grant ends with its session.
	token, err := daemon.Token(d.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "cursor", Version: "1.7"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerRT(token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"workdir": "proj", "path": "notes/from-cursor.md", "content": "x", "create_parents": true}})
		written <- err
	}()
	w := pendingOf(t, b, "from-cursor.md")
	if _, err := b.DecideWith(w.ID, approvals.Decision{Approve: true, Scope: approvals.ScopeSession, By: "test", Via: audit.IPC}); err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"workdir": "proj", "path": "notes/again.md", "content": "y", "create_parents": true}})
	sess.Close()
	tstest.WaitFor(t, time.Minute, "the session grant to end", func() bool { return len(b.EndedGrants()) == 1 })
	// Another real client stays connected.
	zed, err := mcp.NewClient(&mcp.Implementation{Name: "zed", Version: "0.200.4"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerRT(token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zed.Close()
	if _, err := zed.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"workdir": "proj", "path": "docs/p9.md"}}); err != nil {
		t.Fatal(err)
	}
	// A class grant stays in force.
	cl := claude()
	classWrite := call(cl, "write_file", map[string]any{"workdir": "proj", "path": "docs/p10.md", "content": "z"})
	cw := pendingOf(t, b, "p10.md")
	b.DecideWith(cw.ID, approvals.Decision{Approve: true, Scope: approvals.ScopeClass, Minutes: 60, By: "test", Via: audit.IPC})
	done(t, classWrite, "the class-granted write")
	// Three requests decided in the reverse of their order, and two left
	// waiting for the pages.
	var waiting []chan result
	var asked []approvals.Approval
	for i, p := range []string{"first.txt", "second.txt", "third.txt"} {
		waiting = append(waiting, call(codex(), "write_file", map[string]any{"workdir": "documentation-archive-2026", "path": p, "content": fmt.Sprint(i)}))
		asked = append(asked, pendingOf(t, b, p))
	}
	for i := len(asked) - 1; i >= 0; i-- {
		b.Decide(asked[i].ID, i != 1, "test", audit.IPC)
		done(t, waiting[i], "a decided write")
	}
	call(codex(), "write_file", map[string]any{"workdir": "documentation-archive-2026", "path": longPath, "content": "changed\n", "create_parents": true})
	pending := pendingOf(t, b, "package_with_a_rather_long_name")
	call(claude(), "run_command", map[string]any{"workdir": "proj", "command": "rm -rf build", "sandbox": "off"})
	pendingOf(t, b, "rm -rf build")
	// The task's end, for its page.
	tstest.WaitFor(t, time.Minute, "the agent task to end", func() bool {
		r := done(t, call(codex(), "get_agent_task", map[string]any{"task_id": taskID}), "get_agent_task")
		return r.out["terminal"] == true
	})
	var ref string
	lines, _ := audit.Tail(d.Dirs.Audit, 200)
	for _, l := range lines {
		if s, _ := l.Details["session"].(string); s != "" && strings.HasPrefix(l.Peer, "codex") {
			ref = s
		}
	}

	pages := []struct{ name, path, wait string }{
		{"approvals", "/console/approvals", "#decisions"},
		{"approval", "/console/approvals/" + pending.ID, "#state"},
		{"sessions", "/console/sessions", "#session-table"},
		{"session", "/console/sessions?session=" + ref, "#rows tr"},
		{"activity", "/console/activity", "#rows tr"},
		{"audit", "/console/audit?verify=1", "#verify"},
		{"commands", "/console/commands", "main table"},
		{"command", "/console/commands/" + captureID, "#status"},
		{"agents", "/console/agents", "main table"},
		{"agent", "/console/agents/" + taskID, "main table"},
		{"desktop", "/console/desktop", "main h1"},
		{"status", "/console/status", "#policy"},
		{"save-grant", "/console/grants/" + b.Grants()[0].ID + "/save", "#toml"},
	}
	for _, size := range layoutSizes {
		suffix := fmt.Sprintf("%dx%d", size[0], size[1])
		minPath := 180
		if size[0] >= 1920 {
			minPath = 280
		}
		view := chromedp.EmulateViewport(size[0], size[1])
		// The login page renders for a logged-in browser too.
		if err := chromedp.Do(ctx, view, chromedp.Navigate(base+"/console/login"), chromedp.WaitVisible(chromedp.ID("instance"))); err != nil {
			t.Fatalf("%s: the login page: %v", suffix, err)
		}
		check(t, ctx, "login "+suffix, minPath)
		chromedp.Do(ctx, shot("layout-login-"+suffix))
		for _, p := range pages {
			if err := chromedp.Do(ctx, view, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait))); err != nil {
				t.Fatalf("%s %s: %v", suffix, p.path, err)
			}
			r := check(t, ctx, p.name+" "+suffix, minPath)
			if (p.name == "activity" || p.name == "audit" || p.name == "session") && r.Rows < 5 {
				t.Errorf("%s %s: %d rows", p.name, suffix, r.Rows)
			}
			if want := pageSays[p.name]; want != nil {
				text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range want {
					if strings.Contains(w, "!") != !strings.Contains(text, strings.TrimPrefix(w, "!")) {
						t.Errorf("%s %s: %q", p.name, suffix, w)
					}
				}
			}
			if err := chromedp.Do(ctx, shot("layout-"+p.name+"-"+suffix)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// pageSays is what some pages must show in words ("!": must not show).
var pageSays = map[string][]string{
	"status":   {"up ", "not configured", "!not_configured", "! s."},
	"command":  {"echo building the project with a rather long command line", "In\nproj", "!proj/."},
	"commands": {"proj", "!proj/."},
	"approval": {"Requested by", "!Client\n"},
}

// check measures the page in the browser (pageCheck) and reports each
// problem.
func check(t *testing.T, ctx context.Context, what string, minPath int) pageReport {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](pageCheck+"("+fmt.Sprint(minPath)+")"))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var r pageReport
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %s: %v", what, raw, err)
	}
	if r.Page > r.Window {
		t.Errorf("%s: the page is %dpx wide in a %dpx window", what, r.Page, r.Window)
	}
	for _, p := range r.Problems {
		t.Errorf("%s: %s", what, p)
	}
	return r
}

// serveLayoutDaemon runs a daemon with the configuration cfg and options
// o, and returns it with its HTTP base URL.
func serveLayoutDaemon(t *testing.T, o daemon.Options, cfg string) (*daemon.Daemon, string) {
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() { served <- d.ServeHTTP(ctx, func(a net.Addr) { ready <- a }) }()
	t.Cleanup(func() { cancel(); <-served; d.Close() })
	select {
	case a := <-ready:
		return d, "http://" + a.String()
	case err := <-served:
		t.Fatal(err)
	}
	return nil, ""
}

type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
