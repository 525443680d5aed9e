package daemon

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/tstest"
)

type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPSessionGrantEndsWithTheSession: a "this session" grant made for
// an HTTP MCP client lets its later writes run unasked, shows the session
// connected, and ends when the client deletes its session: it is then
// listed as ended (approvals.grants), with why, and the session is no
// longer connected.
func TestHTTPSessionGrantEndsWithTheSession(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte("[server]\nlisten = \"127.0.0.1:0\"\n[policy]\nwait_seconds = 60\n"), 0o600)
	d, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan net.Addr, 1), make(chan error, 1)
	go func() { done <- d.ServeHTTP(ctx, func(a net.Addr) { ready <- a }) }()
	defer func() { cancel(); <-done }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	tok, err := Token(d.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "grant-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: "http://" + addr.String() + "/mcp", HTTPClient: &http.Client{Transport: bearerRT(tok)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	write := func(name string) *mcp.CallToolResult {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": name, "content": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := make(chan *mcp.CallToolResult, 1)
	go func() { first <- write("a.txt") }()
	var a approvals.Approval
	tstest.WaitFor(t, time.Minute, "the write's approval", func() bool {
		l := d.Approvals().List(true)
		if len(l) == 1 {
			a = l[0]
		}
		return len(l) == 1
	})
	if _, err := d.Approvals().DecideWith(a.ID, approvals.Decision{Approve: true, Scope: approvals.ScopeSession, By: "test", Via: audit.IPC}); err != nil {
		t.Fatal(err)
	}
	if res := <-first; res.IsError {
		t.Fatalf("the approved write: %+v", res.Content)
	}
	if res := write("b.txt"); res.IsError {
		t.Fatalf("a write under the session grant: %+v", res.Content)
	}
	g := d.Approvals().Grants()
	ref := audit.SessionRef(a.Action.Session)
	if len(g) != 1 || g[0].Uses != 1 || !d.sessions.Open(ref) {
		t.Fatalf("grants %+v; session %s open %v", g, ref, d.sessions.Open(ref))
	}
	sess.Close() // the client's DELETE
	tstest.WaitFor(t, time.Minute, "the session grant to end", func() bool { return len(d.Approvals().Grants()) == 0 })
	if d.sessions.Open(ref) {
		t.Error("the deleted session is still shown connected")
	}
	// As the CLI lists them: the ended grant, marked ended and why.
	ipcAddr, _ := ipc.Address(d.Dirs.Runtime)
	cl, err := ipc.Connect(ctx, ipcAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	raw, err := cl.Call(ctx, "approvals.grants", nil)
	var list []approvals.Grant
	if err != nil || json.Unmarshal(raw, &list) != nil || len(list) != 1 || list[0].ID != g[0].ID || list[0].Ended.IsZero() ||
		!strings.Contains(list[0].EndedWhy, "session ended") {
		t.Fatalf("approvals.grants after the session: %s %v", raw, err)
	}
	if a, _ := d.Approvals().Get(a.ID); !a.SessionEnded {
		t.Error("the approval does not say its session ended")
	}
}
