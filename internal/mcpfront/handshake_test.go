package mcpfront

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/ops/opstest"
)

// daemon serves the file operations over MCP on one end of a real
// loopback connection, as the daemon serves a control-channel session, and
// returns the other end as the front end gets it.
func daemon(t *testing.T) started {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello"), 0o600)
	jr, err := jail.Open(root, jail.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jr.Close() })
	reg := ops.New(ops.Options{Audit: opstest.AuditLog(t)})
	files.Register(reg, files.NewService([]*files.Workdir{{Alias: "main", Root: jr}}, files.Limits{MaxReadBytes: 1 << 20, MaxListEntries: 100}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	// Accepted before the listener closes: closing it with the connection
	// still queued resets the connection.
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		mcpserve.ServeSession(ctx, reg, audit.MCPStdio, "test", "s", 1<<20, c, c)
		c.Close()
	}()
	t.Cleanup(func() { cancel(); <-done })
	return started{conn: conn, r: bufio.NewReader(conn)}
}

// client is the stdio client's side of serveStarting.
type client struct {
	in   io.WriteCloser
	msgs chan map[string]any
	done chan error
}

func startFront(t *testing.T, o Options, ready <-chan started) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	return startFrontOn(t, o, ready, inR, inW, outR, outW)
}

func startFrontOn(t *testing.T, o Options, ready <-chan started, inR io.Reader, inW io.WriteCloser, outR io.Reader, outW io.WriteCloser) *client {
	t.Helper()
	c := &client{in: inW, msgs: make(chan map[string]any, 16), done: make(chan error, 1)}
	go func() {
		c.done <- o.serveStarting(context.Background(), ready, ipc.MCPHello{}, inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(c.msgs)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("front end wrote %q: %v", sc.Text(), err)
			}
			c.msgs <- m
		}
	}()
	t.Cleanup(func() { inW.Close(); <-c.done })
	return c
}

func (c *client) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(c.in, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// next is the front end's next message (a hang guard, not a timing).
func (c *client) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			err := <-c.done
			c.done <- err
			t.Fatalf("the front end closed stdout: %v", err)
		}
		return m
	case <-time.After(time.Minute):
		t.Fatal("no message from the front end in a minute")
	}
	return nil
}

const (
	initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initDone   = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	listTools  = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	callRead   = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`
)

func toolNames(t *testing.T, m map[string]any) []string {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	tools, ok := res["tools"].([]any)
	if !ok {
		t.Fatalf("not a tool list: %v", m)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	return names
}

func wantID(t *testing.T, m map[string]any, id float64) {
	t.Helper()
	if m["id"] != id || m["result"] == nil {
		t.Fatalf("want the result of request %v, got %v", id, m)
	}
}

// readDone checks the read_file result the front end relayed.
func readDone(t *testing.T, m map[string]any) {
	t.Helper()
	wantID(t, m, 3)
	if b, _ := json.Marshal(m); !strings.Contains(string(b), "hello") {
		t.Fatalf("read_file through the front end: %s", b)
	}
}

// TestStartWithoutCatalogue: with no catalogue the client's session start
// waits for the daemon, whose answers the client gets under its own ids,
// and the daemon's catalogue is kept for the next start.
func TestStartWithoutCatalogue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalogue.json")
	ready := make(chan started, 1)
	c := startFront(t, Options{Catalogue: path, CatalogueKey: "k"}, ready)
	c.send(t, initialize)
	ready <- daemon(t)
	wantID(t, c.next(t), 1)
	c.send(t, initDone, listTools)
	if names := toolNames(t, c.next(t)); len(names) < 10 {
		t.Fatalf("tools: %v", names)
	}
	c.send(t, callRead)
	readDone(t, c.next(t))
	cat := loadCatalogue(path, "k")
	if cat == nil || len(cat.Openings) != 1 || cat.openingFor("2025-06-18") == nil || cat.Openings[0].Initialize == nil {
		t.Fatalf("catalogue kept: %+v", cat)
	}
	if loadCatalogue(path, "other") != nil {
		t.Fatal("a catalogue served a daemon with another key")
	}
}

// keptCatalogue runs one session start and returns its catalogue.
func keptCatalogue(t *testing.T) (string, *Catalogue) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalogue.json")
	ready := make(chan started, 1)
	ready <- daemon(t)
	c := startFront(t, Options{Catalogue: path, CatalogueKey: "k"}, ready)
	c.send(t, initialize, initDone, listTools)
	c.next(t)
	c.next(t) // the list, which follows the catalogue's keeping
	return path, loadCatalogue(path, "k")
}

// fromCatalogue starts a session with open and then list (the lines up to
// tools/list), both answered from the catalogue at path before any daemon
// serves, then sends call, a read_file that waits for the daemon; the
// catalogue being right, nothing tells the client to list again.
func fromCatalogue(t *testing.T, path, open, call string, list ...string) {
	t.Helper()
	ready := make(chan started, 1)
	c := startFront(t, Options{Catalogue: path, CatalogueKey: "k"}, ready)
	c.send(t, open)
	wantID(t, c.next(t), 1) // no daemon yet
	c.send(t, list...)
	if names := toolNames(t, c.next(t)); len(names) < 10 {
		t.Fatalf("tools from the catalogue: %v", names)
	}
	c.send(t, call)
	ready <- daemon(t)
	m := c.next(t)
	if m["method"] != nil {
		t.Fatalf("the catalogue was right, yet the front end sent %v", m)
	}
	readDone(t, m)
}

// TestStartFromCatalogue: with a catalogue for this daemon, initialize
// and tools/list are answered before any daemon serves; calls wait for
// it; the catalogue being right, nothing tells the client to list again.
func TestStartFromCatalogue(t *testing.T) {
	path, kept := keptCatalogue(t)
	fromCatalogue(t, path, initialize, callRead, initDone, listTools)
	if now := loadCatalogue(path, "k"); string(now.Openings[0].Tools) != string(kept.Openings[0].Tools) {
		t.Fatal("the catalogue changed")
	}
}

// TestStaleCatalogue: a catalogue whose tools the daemon does not have is
// answered from, then corrected: the client is told the list changed,
// lists again through the daemon, and the next start gets the new list.
func TestStaleCatalogue(t *testing.T) {
	path, kept := keptCatalogue(t)
	stale := *kept.Openings[0]
	stale.Tools = json.RawMessage(`{"tools":[]}`)
	if err := keepOpening(path, "k", kept, &stale); err != nil {
		t.Fatal(err)
	}
	ready := make(chan started, 1)
	c := startFront(t, Options{Catalogue: path, CatalogueKey: "k"}, ready)
	c.send(t, initialize)
	wantID(t, c.next(t), 1)
	c.send(t, initDone, listTools)
	if names := toolNames(t, c.next(t)); len(names) != 0 {
		t.Fatalf("tools from the stale catalogue: %v", names)
	}
	ready <- daemon(t)
	if m := c.next(t); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("want notifications/tools/list_changed, got %v", m)
	}
	c.send(t, strings.Replace(listTools, `"id":2`, `"id":4`, 1))
	m := c.next(t)
	if names := toolNames(t, m); m["id"] != 4.0 || len(names) < 10 {
		t.Fatalf("listing again: %v", m)
	}
	if now := loadCatalogue(path, "k"); string(now.Openings[0].Tools) == `{"tools":[]}` {
		t.Fatal("the stale catalogue was kept")
	}
}

// TestCatalogueOtherProtocol: a client asking for another protocol version
// than the catalogue's is answered by the daemon, which negotiates it.
func TestCatalogueOtherProtocol(t *testing.T) {
	path, _ := keptCatalogue(t)
	ready := make(chan started, 1)
	c := startFront(t, Options{Catalogue: path, CatalogueKey: "k"}, ready)
	c.send(t, strings.Replace(initialize, "2025-06-18", "2025-03-26", 1))
	ready <- daemon(t)
	m := c.next(t)
	wantID(t, m, 1)
	if v := m["result"].(map[string]any)["protocolVersion"]; v != "2025-03-26" {
		t.Fatalf("protocol version %v, want the client's 2025-03-26", v)
	}
}

// The stateless protocol's start (2026-07-28): no initialize; every
// request names the protocol version and the client in _meta.
const (
	meta      = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	discover  = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`
	listMeta  = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`
	readMeta  = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"},` + meta + `}}`
	stateless = "2026-07-28"
)

// TestStatelessStart: a client of the stateless protocol starts with
// server/discover. Without a catalogue it waits for the daemon, whose
// answers it gets under its own ids, and the daemon's are kept; the next
// start is answered from them before any daemon serves, and its calls
// wait for the daemon. The catalogue keeps the versions with sessions
// beside it.
func TestStatelessStart(t *testing.T) {
	path, _ := keptCatalogue(t) // 2025-06-18, with initialize
	ready := make(chan started, 1)
	c := startFront(t, Options{Catalogue: path, CatalogueKey: "k"}, ready)
	c.send(t, discover)
	ready <- daemon(t)
	m := c.next(t)
	wantID(t, m, 1)
	if v := m["result"].(map[string]any)["supportedVersions"]; v == nil {
		t.Fatalf("not a server/discover result: %v", m)
	}
	c.send(t, listMeta)
	if names := toolNames(t, c.next(t)); len(names) < 10 {
		t.Fatalf("tools: %v", names)
	}
	cat := loadCatalogue(path, "k")
	if cat == nil || len(cat.Openings) != 2 || cat.Openings[0].Protocol != stateless || cat.Openings[0].Discover == nil || cat.Openings[0].Initialize != nil ||
		cat.openingFor("2025-06-18") == nil {
		t.Fatalf("catalogue kept: %+v", cat)
	}

	fromCatalogue(t, path, discover, readMeta, listMeta)
	fromCatalogue(t, path, initialize, callRead, initDone, listTools)
}

// TestCatalogueOpeningsBounded: the catalogue keeps the latest opening
// first and at most maxOpenings of them, one per protocol version; an
// opening kept again unchanged is not written again.
func TestCatalogueOpeningsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalogue.json")
	steps := []struct{ version, tools string }{
		{"v1", "a"}, {"v2", "a"}, {"v3", "a"}, {"v4", "a"}, {"v5", "a"},
		{"v3", "a"}, // unchanged: stays where it is
		{"v2", "b"}, // v2 was dropped with v5; back, first
		{"v6", "a"},
	}
	for _, st := range steps {
		old := loadCatalogue(path, "k")
		tools := json.RawMessage(`{"tools":[],"x":"` + st.tools + `"}`)
		if err := keepOpening(path, "k", old, &opening{Protocol: st.version, Initialize: json.RawMessage(`{}`), Tools: tools}); err != nil {
			t.Fatal(err)
		}
	}
	cat := loadCatalogue(path, "k")
	var got []string
	for _, o := range cat.Openings {
		got = append(got, o.Protocol)
	}
	if want := []string{"v6", "v2", "v5", "v4"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("openings %v, want %v", got, want)
	}
	// Another daemon's catalogue is replaced, not added to.
	if err := keepOpening(path, "other", cat, &opening{Protocol: "v7", Discover: json.RawMessage(`{}`), Tools: json.RawMessage(`{"tools":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if loadCatalogue(path, "k") != nil {
		t.Fatal("the old daemon's catalogue is still read")
	}
	if now := loadCatalogue(path, "other"); now == nil || len(now.Openings) != 1 {
		t.Fatalf("catalogue for another daemon: %+v", now)
	}
}

// TestClientLeavesBeforeDaemon: a client that closes stdin before the
// daemon serves has left (as when it exits, see pipe): the front end ends
// once the daemon has closed the session, without an error.
func TestClientLeavesBeforeDaemon(t *testing.T) {
	ready := make(chan started, 1)
	c := startFront(t, Options{}, ready)
	c.send(t, initialize)
	c.in.Close()
	ready <- daemon(t)
	if err := <-c.done; err != nil {
		t.Fatalf("the front end ended with %v", err)
	}
	c.done <- nil
}

// TestNotAnMCPStart: a client that does not start with initialize has its
// messages passed to the daemon as they are.
func TestNotAnMCPStart(t *testing.T) {
	ready := make(chan started, 1)
	c := startFront(t, Options{}, ready)
	c.send(t, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	ready <- daemon(t)
	if m := c.next(t); m["id"] != 7.0 {
		t.Fatalf("ping before initialize: %v", m)
	}
}
