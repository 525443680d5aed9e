package files_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/devplatform/devplatformtest"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/link"
	"github.com/hostlink/hostlink/internal/mcpserve"
)

// TestAddingAnOperation: docs/DESIGN.md's "Adding an operation" holds. The
// test-only test_count_lines is one file of this package (testop_test.go)
// and nothing else: the daemon's assembly registers it, MCP lists it with
// its schemas and runs it, the control channel and the link's
// OPERATION_CALL reach it, the policy judges it by the path it describes,
// and every call is audited.
func TestAddingAnOperation(t *testing.T) {
	home := t.TempDir()
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	t.Setenv("HOSTLINK_HOME", home)
	w := filepath.Join(home, "w")
	os.MkdirAll(w, 0o755)
	os.WriteFile(filepath.Join(w, "f.txt"), []byte("one\ntwo\nthree\n"), 0o600)
	cfg := filepath.Join(home, "c.toml")
	config := "[server]\nlisten = \"127.0.0.1:0\"\n[[workdirs]]\nalias = \"w\"\npath = '" + w + "'\n"
	os.WriteFile(cfg, []byte(config), 0o600)
	d, err := daemon.Open(daemon.Options{ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := t.Context()
	const name = "test_count_lines"
	op, ok := d.Registry.Lookup(name)
	if !ok {
		t.Fatal("assemble did not register the package's new operation")
	}
	if !op.Describes {
		t.Error("the new operation does not describe its requests to the policy")
	}
	args := json.RawMessage(`{"path":"f.txt"}`)

	// MCP lists it with the registry's schemas, and runs it.
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserve.NewServer(d.Registry, audit.MCPStdio, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == name })
	if i < 0 {
		t.Fatal("MCP does not list the new operation")
	}
	if !sameJSON(t, tools.Tools[i].InputSchema, op.InputSchemaJSON()) || !sameJSON(t, tools.Tools[i].OutputSchema, op.OutputSchemaJSON()) {
		t.Errorf("MCP lists it with other schemas than the registry's: %v, %v", tools.Tools[i].InputSchema, tools.Tools[i].OutputSchema)
	}
	mcpCall := func() (json.RawMessage, bool) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return json.RawMessage(res.Content[0].(*mcp.TextContent).Text), res.IsError
	}
	if out, isErr := mcpCall(); isErr || string(out) != `{"lines":3}` {
		t.Errorf("over MCP: %s", out)
	}

	// The control channel reaches it.
	ready := make(chan net.Addr, 1)
	served := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { served <- d.ServeHTTP(sctx, func(a net.Addr) { ready <- a }) }()
	defer func() { stop(); <-served }()
	select {
	case <-ready:
	case err := <-served:
		t.Fatal(err)
	}
	ipcAddr, _ := ipc.Address(d.Dirs.Runtime)
	ic, err := ipc.Connect(ctx, ipcAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close()
	if out, err := ic.Call(ctx, name, args); err != nil || string(out) != `{"lines":3}` {
		t.Errorf("over the control channel: %s, %v", out, err)
	}

	// So does the link's OPERATION_CALL.
	ptok := devplatform.NewToken()
	plat := devplatform.New(ptok, devplatform.Config{})
	platURL := devplatformtest.Serve(t, plat)
	lo, err := d.LinkOptions(daemon.LinkOptions{URL: platURL, Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	lo.Token = ptok
	svc, err := link.New(lo)
	if err != nil {
		t.Fatal(err)
	}
	lctx, stopLink := context.WithCancel(ctx)
	linked := make(chan error, 1)
	go func() { linked <- svc.Run(lctx) }()
	defer func() { stopLink(); <-linked }()
	peer, err := plat.WaitPeer(ctx, "s1", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := peer.Request(ctx, "OPERATION_CALL", "", map[string]any{"op": name, "args": args})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(e.Payload, &res); string(res.Result) != `{"lines":3}` {
		t.Errorf("over the link: %s %s", e.Type, e.Payload)
	}

	// The policy judges it: under files_read = deny it is refused.
	os.WriteFile(cfg, []byte(config+"[policy]\nfiles_read = \"deny\"\n"), 0o600)
	if _, err := d.Reload("test"); err != nil {
		t.Fatal(err)
	}
	out, isErr := mcpCall()
	var refused struct{ Error struct{ Code string } }
	if json.Unmarshal(out, &refused); !isErr || refused.Error.Code != "POLICY_DENIED" {
		t.Errorf("under files_read = deny: %s", out)
	}

	// One audit record a call, naming its transport and outcome.
	lines, err := audit.Tail(d.Dirs.Audit, 200)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		if l.Op == name {
			got = append(got, string(l.Transport)+" "+l.Code)
		}
	}
	if want := []string{"mcp-stdio OK", "ipc OK", "link OK", "mcp-stdio POLICY_DENIED"}; !slices.Equal(got, want) {
		t.Errorf("audited as %q, want %q", got, want)
	}
}

func sameJSON(t *testing.T, a any, b json.RawMessage) bool {
	t.Helper()
	ab, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var x, y any
	json.Unmarshal(ab, &x)
	json.Unmarshal(b, &y)
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
