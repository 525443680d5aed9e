package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/tools/txtar"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/commands"
	"github.com/hostlink/hostlink/internal/companion"
	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/devplatform/devplatformtest"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/link"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

var updateTranscripts = flag.Bool("update", false, "rewrite the answers in testdata/transcripts (the requests are kept)")

// transcripts holds one txtar archive per operation: its request, written
// by hand, and what each transport answered it under each policy mode,
// written by -update.
const transcripts = "testdata/transcripts"

// transcriptNote is how a transcript says which part is whose.
const transcriptNote = "request.json is written by hand (a minimal valid request, against the workdir w holding f.txt and d/g.txt); the rest by go test ./internal/daemon -run TestEveryOperationOnEveryTransport -update."

// undriven are the transports no test here calls operations over, and why.
var undriven = map[audit.Transport]string{
	audit.Console: "the web console calls only the read-only operations its pages show, with arguments of its own: no request of a caller's reaches it",
}

// notAsked are the operations whose transcript request the policy
// refuses under ask without asking anybody, and why.
var notAsked = map[string]string{
	// Nobody is asked about an action that would fail anyway
	// (policy.Action.Refuse); an observation can be had only from a
	// desktop, which the test has not.
	"computer_act": "an act names an observation, and the transcript's is unknown",
}

// modes are the policies each operation is called under: everything
// allowed, everything denied, everything asked. No call waits for a
// decision (Wait 0): one that asks answers APPROVAL_PENDING at once.
var modes = []struct {
	name string
	cfg  func() policy.Config
}{
	{"allow", func() policy.Config { c := policy.AllowAll(); c.Wait = 0; return c }},
	{"deny", func() policy.Config { return everyClass(policy.Deny) }},
	{"ask", func() policy.Config { return everyClass(policy.Ask) }},
}

func everyClass(m policy.Mode) policy.Config {
	c := policy.Defaults()
	for _, k := range policy.Classes {
		c.Default.Modes[k] = m
	}
	c.PlatformFolders, c.Wait = m, 0
	return c
}

// TestEveryOperationOnEveryTransport: every operation the fully enabled
// daemon registers is listed, callable, policed and audited alike on
// every transport that offers it: MCP on stdio and on HTTP (listed with
// the registry's input and output schemas), the control channel, the
// platform link (OPERATION_CALL on a session's data connection, where
// the link was granted the operation's capability; browse_directories on
// the control connection) and the mesh (for the classes the machine
// offers). Under deny every transport refuses it with POLICY_DENIED,
// under ask it waits for an approval (APPROVAL_PENDING), unless its
// class is hostlink's own or its spec says NoAsk; every call leaves
// exactly one audit record naming its transport and outcome. Each
// operation's request and the answers, normalised, are in
// testdata/transcripts/OP.txtar, compared, and rewritten with -update.
// It runs on Linux, where the desktop can be taken away from it. An
// operation with no transcript fails the test.
func TestEveryOperationOnEveryTransport(t *testing.T) {
	if runtime.GOOS != "linux" {
		// Elsewhere the desktop cannot be taken away from the test, and
		// computer_clipboard_write would change the user's clipboard.
		t.Skip("the transcripts are Linux's, with no desktop")
	}
	// No desktop: the computer operations answer the same on every machine.
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	home := t.TempDir()
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	t.Setenv("HOSTLINK_HOME", home)
	t.Setenv("HOME", home) // the folder browser's root
	w := filepath.Join(home, "w")
	os.MkdirAll(w, 0o755)
	var classes []string
	for _, c := range policy.Classes {
		classes = append(classes, `"`+string(c)+`"`)
	}
	cfg := filepath.Join(home, "c.toml")
	os.WriteFile(cfg, []byte("[server]\nlisten = \"127.0.0.1:0\"\n"+
		"[commands]\nenabled = true\n[computer]\nenabled = true\nclipboard = true\n"+
		"[agents]\nenabled = true\nruntimes = [\"fake\"]\n[companion]\nlisten = \"127.0.0.1:0\"\n"+
		"[mesh]\nclasses = ["+strings.Join(classes, ", ")+"]\n"+
		"[[workdirs]]\nalias = \"w\"\npath = '"+w+"'\nagent_mode = \"workspace-write\"\n"), 0o600)
	// An agent runtime whose program does not exist: tasks are accepted
	// and fail, the same everywhere.
	d, err := Open(Options{ConfigPath: cfg, Runtimes: map[string]agent.Factory{fakeruntime.Name: func() (agent.Runtime, error) {
		return &fakeruntime.Runtime{Argv: []string{filepath.Join(home, "no-such-agent")}}, nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	// Every capability is on, opt-ins included: each operation a
	// configuration can add is registered.
	for _, specs := range [][]ops.Spec{commands.Specs(), desktop.Specs(), agent.Specs(), companion.Specs()} {
		for _, s := range specs {
			if _, ok := d.Registry.Lookup(s.Name); !ok {
				t.Errorf("%s is not registered: the test's configuration leaves it off", s.Name)
			}
		}
	}
	ctx := t.Context()
	tr := startTransports(t, d)

	// Every registered operation has a transcript, and every transcript an
	// operation.
	names := map[string]bool{}
	for _, op := range d.Registry.Ops() {
		names[op.Name] = true
	}
	files, _ := filepath.Glob(filepath.Join(transcripts, "*.txtar"))
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".txtar"); !names[name] {
			t.Errorf("%s: no operation %s is registered", f, name)
		}
	}

	// Listed on MCP with the registry's schemas, and nothing else listed.
	listed := map[audit.Transport]map[string]*mcp.Tool{}
	for _, m := range []audit.Transport{audit.MCPStdio, audit.MCPHTTP} {
		listed[m] = map[string]*mcp.Tool{}
		res, err := tr.mcp[m].ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			listed[m][tool.Name] = tool
			if _, ok := d.Registry.Lookup(tool.Name); !ok {
				t.Errorf("%s lists %s, which is not registered", m, tool.Name)
			}
		}
	}

	cursor := audit.NewCursor(d.Dirs.Audit, 0)
	drain(t, cursor)
	// stop goes last: it ends ServeHTTP, which the test then serves again.
	all := d.Registry.Ops()
	slices.SortStableFunc(all, func(a, b *ops.Op) int {
		return boolInt(a.Name == "stop") - boolInt(b.Name == "stop")
	})
	for _, op := range all {
		t.Run(op.Name, func(t *testing.T) {
			path := filepath.Join(transcripts, op.Name+".txtar")
			ar, err := txtar.ParseFile(path)
			if err != nil {
				if *updateTranscripts {
					ar = &txtar.Archive{Comment: []byte(op.Name + " on every transport. " + transcriptNote + "\n"),
						Files: []txtar.File{{Name: "request.json", Data: []byte("{}\n")}}}
				} else {
					t.Fatalf("no transcript for %s: write %s with its minimal valid request as request.json, then run go test ./internal/daemon -run TestEveryOperationOnEveryTransport -update (%v)", op.Name, path, err)
				}
			}
			req := section(ar, "request.json")
			if req == nil || !json.Valid(req) {
				t.Fatalf("%s: request.json is missing or not JSON", path)
			}
			got := []txtar.File{{Name: "request.json", Data: req}}
			shown, problems := listing(op, listed)
			for _, p := range problems {
				t.Error(p)
			}
			got = append(got, txtar.File{Name: "listed", Data: shown})
			for _, m := range modes {
				d.pol.engine.Set(m.cfg())
				codes := map[audit.Transport]string{}
				for _, x := range transportOrder {
					if !op.Offered(x) || undriven[x] != "" {
						continue
					}
					seedWorkdir(t, w)
					out := tr.call(ctx, x, op.Name, req)
					if op.Name == "stop" {
						tr.restart(t)
					}
					codes[x] = out.Code
					got = append(got, txtar.File{Name: m.name + "/" + string(x) + ".json", Data: out.encode(home)})
					checkAudited(t, cursor, op.Name, x, out.Code)
				}
				checkPoliced(t, op, m.name, codes, tr.linkGranted)
			}
			// The approvals asked for are denied, so that no transcript
			// depends on the operations called before it.
			for _, a := range d.Approvals().List(true) {
				d.Approvals().Decide(a.ID, false, "test", audit.Internal)
			}
			compare(t, path, ar, got)
		})
	}
}

// linkMessages are the operations the link serves on its control
// connection, by a message of their own rather than OPERATION_CALL.
var linkMessages = map[string]string{browseapi.OpBrowseDirectories: wire.TypeDirectoryListRequest}

// transportOrder is the order of each transcript's answers.
var transportOrder = []audit.Transport{audit.MCPStdio, audit.MCPHTTP, audit.IPC, audit.Console, audit.Link, audit.Mesh}

// checkPoliced checks one mode's answers: the same code on every
// transport that serves the operation, that code being POLICY_DENIED under
// deny and APPROVAL_PENDING under ask unless the policy lets the
// operation through anyway (its class is hostlink's own, or it does not
// ask); and, under allow, a request the operation accepts.
func checkPoliced(t *testing.T, op *ops.Op, mode string, codes map[audit.Transport]string, linkGranted []string) {
	t.Helper()
	served := map[audit.Transport]string{}
	for x, code := range codes {
		switch {
		case x == audit.Link && !slices.Contains(linkGranted, string(op.Capability)):
			if code != string(errcode.CapabilityNotGranted) {
				t.Errorf("%s over the link, whose capability %s is not granted: %q", mode, op.Capability, code)
			}
		case x == audit.Mesh && op.Class == policy.Hostlink:
			if code != string(policy.CodeClassNotOffered) {
				t.Errorf("%s over the mesh, which never offers class hostlink: %q", mode, code)
			}
		default:
			served[x] = code
		}
	}
	var want string
	switch {
	case mode == "deny" && op.Class != policy.Hostlink:
		want = string(policy.CodeDenied)
	case mode == "ask" && op.Class != policy.Hostlink && !op.NoAsk && notAsked[op.Name] == "":
		want = string(approvals.CodePending)
	}
	var first string
	for _, x := range transportOrder {
		code, ok := served[x]
		if !ok {
			continue
		}
		switch {
		case want != "" && code != want:
			t.Errorf("%s on %s: %q, want %s", mode, x, code, want)
		case mode == "allow" && slices.Contains([]string{string(errcode.InvalidArgument), string(errcode.UnknownOperation), string(errcode.CapabilityDisabled)}, code):
			t.Errorf("allowed on %s: %q: the transcript's request must be one the operation accepts", x, code)
		case first != "" && code != first:
			t.Errorf("%s on %s: %q, where another transport answered %q", mode, x, code, first)
		}
		if first == "" {
			first = code
		}
	}
}

// checkAudited reads the records written since the last call and checks
// that exactly one is op's, with the transport and outcome of the call.
func checkAudited(t *testing.T, c *audit.Cursor, op string, x audit.Transport, code string) {
	t.Helper()
	if code == "" {
		code = "OK"
	}
	var mine []string
	for _, l := range drain(t, c) {
		var r struct{ Op, Transport, Code string }
		json.Unmarshal(l.Line, &r)
		if r.Op == op {
			mine = append(mine, r.Transport+" "+r.Code)
		}
	}
	if want := string(x) + " " + code; len(mine) != 1 || mine[0] != want {
		t.Errorf("a call over %s audited as %q, want [%s]", x, mine, want)
	}
}

func drain(t *testing.T, c *audit.Cursor) []audit.CursorLine {
	t.Helper()
	var all []audit.CursorLine
	for {
		lines, err := c.Next(1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) == 0 {
			return all
		}
		all = append(all, lines...)
	}
}

// listing is how MCP lists op: on each MCP transport, whether it is
// listed and whether with the registry's schemas. problems are what
// contradicts the registry: an operation offered but not listed or listed
// but not offered, or a schema not the registry's (no output schema is
// right only for a text-only result, whose transcript shows it).
func listing(op *ops.Op, listed map[audit.Transport]map[string]*mcp.Tool) (shown []byte, problems []string) {
	var b bytes.Buffer
	for _, m := range []audit.Transport{audit.MCPStdio, audit.MCPHTTP} {
		tool, ok := listed[m][op.Name]
		switch {
		case !op.Offered(m) && !ok:
			fmt.Fprintf(&b, "%s: not offered, not listed\n", m)
		case !ok:
			problems = append(problems, fmt.Sprintf("%s offers %s but does not list it", m, op.Name))
		case !op.Offered(m):
			problems = append(problems, fmt.Sprintf("%s lists %s but does not offer it", m, op.Name))
		default:
			out := "the registry's"
			switch {
			case tool.OutputSchema == nil:
				out = "none (a text-only result)"
			case !equalJSON(tool.OutputSchema, op.OutputSchemaJSON()):
				problems = append(problems, fmt.Sprintf("%s lists %s with another output schema than the registry's", m, op.Name))
			}
			if !equalJSON(tool.InputSchema, op.InputSchemaJSON()) {
				problems = append(problems, fmt.Sprintf("%s lists %s with another input schema than the registry's", m, op.Name))
			}
			fmt.Fprintf(&b, "%s: listed with the registry's input schema, output schema %s\n", m, out)
		}
	}
	return b.Bytes(), problems
}

// compare checks the answers against the transcript, or writes them with
// -update (keeping the archive's comment and request).
func compare(t *testing.T, path string, ar *txtar.Archive, got []txtar.File) {
	t.Helper()
	if *updateTranscripts {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, txtar.Format(&txtar.Archive{Comment: ar.Comment, Files: got}), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := map[string][]byte{}
	for _, f := range ar.Files {
		want[f.Name] = f.Data
	}
	for _, f := range got {
		if w, ok := want[f.Name]; !ok {
			t.Errorf("%s has no %s: run with -update", path, f.Name)
		} else if !bytes.Equal(w, f.Data) {
			t.Errorf("%s, %s:\n got %s\nwant %s", path, f.Name, f.Data, w)
		}
		delete(want, f.Name)
	}
	for name := range want {
		t.Errorf("%s has %s, which no transport answered: run with -update", path, name)
	}
}

func section(ar *txtar.Archive, name string) []byte {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// seedWorkdir puts the workdir back as every request expects it, whatever
// the call before changed: f.txt and d/g.txt.
func seedWorkdir(t *testing.T, w string) {
	t.Helper()
	entries, _ := os.ReadDir(w)
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(w, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(w, "d"), 0o755)
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, f := range []string{"f.txt", filepath.Join("d", "g.txt")} {
		p := filepath.Join(w, f)
		if err := os.WriteFile(p, []byte("the same everywhere\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, fixed, fixed)
	}
	os.Chtimes(filepath.Join(w, "d"), fixed, fixed)
}

// outcome is one call's answer: a result or an error.
type outcome struct {
	Result  json.RawMessage `json:"result,omitempty"`
	Text    string          `json:"text,omitempty"` // a text-only MCP result
	Code    string          `json:"code,omitempty"`
	Message string          `json:"message,omitempty"`
}

func errOutcome(err error) outcome {
	e := errcode.As(err)
	return outcome{Code: string(e.Code), Message: e.Message}
}

// encode is the outcome as a transcript holds it, with what changes from
// run to run replaced (see normalize).
func (o outcome) encode(home string) []byte {
	var v any
	b, _ := json.Marshal(o)
	json.Unmarshal(b, &v)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(normalize(v, "", home))
	return out.Bytes()
}

// volatile are the keys whose values change from run to run (ids, times,
// durations, process ids, file revisions: a seeded file is a new inode)
// or from machine to machine (the toolchain, the kernel's sandbox).
var volatile = regexp.MustCompile(`(^|_)(id|ref|at|pid|ms|seconds|revision)$|^(go|target|sandbox|command_sandbox)$`)

// volatileText are the parts of strings that change from run to run.
var volatileText = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:<port>"},
	{regexp.MustCompile(`\b[0-9a-f]{16,}\b`), "<hex>"},
	{regexp.MustCompile(`\b[A-Z2-7]{26,}\b`), "<key>"}, // NATS keys, session ids
	{regexp.MustCompile(`\b(pid|process) \d+`), "$1 <pid>"},
}

// normalize replaces in v, a decoded JSON value, what volatile and
// volatileText match, and the temporary home with $HOME.
func normalize(v any, key, home string) any {
	if volatile.MatchString(key) && v != nil && v != "" && v != 0.0 && v != false {
		return "<" + key + ">"
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e, k, home)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e, key, home)
		}
	case string:
		if key == "sha256" {
			return x // a digest of the seeded content: the same every run
		}
		x = strings.ReplaceAll(x, home, "$HOME")
		for _, r := range volatileText {
			x = r.re.ReplaceAllString(x, r.with)
		}
		return x
	}
	return v
}

func equalJSON(a any, b json.RawMessage) bool {
	ab, err := json.Marshal(a)
	if err != nil {
		return false
	}
	var x, y any
	json.Unmarshal(ab, &x)
	json.Unmarshal(b, &y)
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// callers are the clients the test drives, connected to one daemon.
type callers struct {
	mcp map[audit.Transport]*mcp.ClientSession
	ipc *ipc.Client
	// restart waits for a stop to end ServeHTTP, then serves the
	// control channel and MCP on HTTP again.
	restart     func(t *testing.T)
	peer        *devplatform.Peer // a legacy session's data connection
	control     *devplatform.Peer // the control connection
	linkGranted []string          // the capabilities granted on either
	mesh        meshCaller
}

// startTransports serves d on every transport and connects a caller to
// each, as TestOperationOnEveryTransport does.
func startTransports(t *testing.T, d *Daemon) *callers {
	ctx := t.Context()
	tr := &callers{mcp: map[audit.Transport]*mcp.ClientSession{}}
	var (
		served chan error // ServeHTTP's end
		cancel context.CancelFunc
	)
	serve := func(t *testing.T) {
		ready := make(chan net.Addr, 1)
		served = make(chan error, 1)
		var sctx context.Context
		sctx, cancel = context.WithCancel(context.WithoutCancel(ctx))
		go func() { served <- d.ServeHTTP(sctx, func(a net.Addr) { ready <- a }) }()
		var addr net.Addr
		select {
		case addr = <-ready:
		case err := <-served:
			t.Fatal(err)
		}
		ipcAddr, _ := ipc.Address(d.Dirs.Runtime)
		c, err := ipc.Connect(ctx, ipcAddr)
		if err != nil {
			t.Fatal(err)
		}
		tr.ipc = c
		tok, _ := Token(d.Dirs)
		s, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: "http://" + addr.String() + "/mcp", HTTPClient: &http.Client{Transport: bearer(tok)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr.mcp[audit.MCPHTTP] = s
	}
	serve(t)
	t.Cleanup(func() {
		tr.mcp[audit.MCPHTTP].Close()
		tr.ipc.Close()
		cancel()
		<-served
	})
	// A stop ends ServeHTTP by itself: the test waits for that (as long
	// as it waits for any call), then serves again.
	tr.restart = func(t *testing.T) {
		wait, done := context.WithTimeout(ctx, time.Minute)
		defer done()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeHTTP after a stop: %v", err)
			}
		case <-wait.Done():
			t.Fatal("a stop did not end ServeHTTP")
		}
		cancel()
		tr.mcp[audit.MCPHTTP].Close()
		tr.ipc.Close()
		serve(t)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserve.NewServer(d.Registry, audit.MCPStdio, "parent pid 1").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	tr.mcp[audit.MCPStdio] = cs

	ptok := devplatform.NewToken()
	plat := devplatform.New(ptok, devplatform.Config{})
	platURL := devplatformtest.Serve(t, plat)
	lo, err := d.LinkOptions(LinkOptions{URL: platURL, Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	lo.Token = ptok
	svc, err := link.New(lo)
	if err != nil {
		t.Fatal(err)
	}
	lctx, stopLink := context.WithCancel(context.WithoutCancel(ctx))
	linked := make(chan error, 1)
	go func() { linked <- svc.Run(lctx) }()
	t.Cleanup(func() { stopLink(); <-linked })
	if tr.peer, err = plat.WaitPeer(ctx, "s1", time.Time{}); err != nil {
		t.Fatal(err)
	}
	// And a control connection, where the platform browses for folders.
	co, err := d.LinkOptions(LinkOptions{URL: lo.URL})
	if err != nil {
		t.Fatal(err)
	}
	co.Token = ptok
	csvc, err := link.New(co)
	if err != nil {
		t.Fatal(err)
	}
	cctx, stopControl := context.WithCancel(context.WithoutCancel(ctx))
	controlled := make(chan error, 1)
	go func() { controlled <- csvc.Run(cctx) }()
	t.Cleanup(func() { stopControl(); <-controlled })
	if tr.control, err = plat.WaitPeer(ctx, devplatform.ControlPeer, time.Time{}); err != nil {
		t.Fatal(err)
	}
	tr.linkGranted = append(slices.Clone(tr.peer.Granted), tr.control.Granted...)
	sort.Strings(tr.linkGranted)

	tr.mesh = enrolInMesh(t, d)
	stopMesh, err := d.StartMesh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopMesh)
	return tr
}

// call runs op over transport x and returns its answer.
func (tr *callers) call(ctx context.Context, x audit.Transport, op string, args json.RawMessage) outcome {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	switch x {
	case audit.MCPStdio, audit.MCPHTTP:
		res, err := tr.mcp[x].CallTool(ctx, &mcp.CallToolParams{Name: op, Arguments: args})
		if err != nil {
			return errOutcome(err)
		}
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		if res.IsError {
			var body struct{ Error *errcode.Error }
			json.Unmarshal([]byte(text), &body)
			if body.Error == nil {
				return outcome{Code: "UNREADABLE", Message: text}
			}
			return outcome{Code: string(body.Error.Code), Message: body.Error.Message}
		}
		if res.StructuredContent == nil {
			return outcome{Text: text}
		}
		b, _ := json.Marshal(res.StructuredContent)
		return outcome{Result: b}
	case audit.IPC:
		res, err := tr.ipc.Call(ctx, op, args)
		if err != nil {
			return errOutcome(err)
		}
		return outcome{Result: res}
	case audit.Mesh:
		res, err := tr.mesh.client.Call(ctx, tr.mesh.machine, op, args, "")
		if err != nil {
			return errOutcome(err)
		}
		return outcome{Result: res}
	case audit.Link:
		var (
			e   *wire.Envelope
			err error
		)
		if typ, ok := linkMessages[op]; ok {
			e, err = tr.control.Request(ctx, typ, "", args)
		} else {
			e, err = tr.peer.Request(ctx, "OPERATION_CALL", "", map[string]any{"op": op, "args": args})
		}
		if err != nil {
			return errOutcome(err)
		}
		if e.Type != wire.TypeError && e.Type != wire.TypeOperationResult {
			return outcome{Result: e.Payload}
		}
		var p struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Result  json.RawMessage `json:"result"`
		}
		json.Unmarshal(e.Payload, &p)
		if p.Code != "" {
			return outcome{Code: p.Code, Message: p.Message}
		}
		return outcome{Result: p.Result}
	}
	return outcome{Code: "UNDRIVEN"}
}
