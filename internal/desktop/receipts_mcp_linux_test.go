package desktop

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/tstest"
)

// keyWatch is a window of the test's own on the display that has the
// focus and reports each key press it gets. At the press numbered grabAt
// it grabs the server, which from then on serves no other client: input
// that hostlink sends after that press is held unprocessed until the
// server ends, whatever the machine's speed.
type keyWatch struct {
	conn    *xgb.Conn
	grabbed chan struct{}
}

func watchKeys(t *testing.T, e *env, grabAt int) *keyWatch {
	t.Helper()
	conn, err := xgb.NewConnDisplay(e.d.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	screen := xproto.Setup(conn).DefaultScreen(conn)
	wid, err := xproto.NewWindowId(conn)
	if err != nil {
		t.Fatal(err)
	}
	if err := xproto.CreateWindowChecked(conn, screen.RootDepth, wid, screen.Root, 50, 50, 300, 200, 0,
		xproto.WindowClassInputOutput, screen.RootVisual, xproto.CwBackPixel|xproto.CwEventMask,
		[]uint32{screen.WhitePixel, xproto.EventMaskKeyPress}).Check(); err != nil {
		t.Fatal(err)
	}
	name := "key-watch"
	xproto.ChangeProperty(conn, xproto.PropModeReplace, wid, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(name)), []byte(name))
	xproto.MapWindow(conn, wid)
	// Openbox focuses a new window once it manages it, which may be well
	// after the map request (xdotool finds the window before that). Until
	// the X input focus, which the act's drift check reads, is on it, an
	// observation could record another focus than the act finds, or keys
	// could go elsewhere.
	e.d.Managed(strconv.FormatUint(uint64(wid), 10), "the key-watch window")
	tstest.WaitFor(t, 20*time.Second, "the input focus on the key-watch window", func() bool {
		r, err := xproto.GetInputFocus(conn).Reply()
		return err == nil && r.Focus == wid
	})
	w := &keyWatch{conn: conn, grabbed: make(chan struct{})}
	go func() {
		n := 0
		for {
			ev, err := conn.WaitForEvent()
			if ev == nil && err == nil {
				return // the connection closed
			}
			if _, ok := ev.(xproto.KeyPressEvent); ok {
				if n++; n == grabAt {
					xproto.GrabServer(conn)
					xproto.GetInputFocus(conn).Reply() // the grab is in force
					close(w.grabbed)
				}
			}
		}
	}()
	return w
}

// mcpClient connects the Go SDK's client to e's registry through
// hostlink's MCP server.
func mcpClient(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcpserve.NewServer(e.reg, audit.MCPStdio, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: %s", tool, res.Content[0].(*mcp.TextContent).Text)
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), out); err != nil {
		t.Fatal(err)
	}
}

// TestReceiptsOverMCP produces the receipts partial and unknown end to end:
// real XTest input through hostlink's MCP server and the Go SDK's client,
// cut by the X session ending (the server killed) in the middle of the
// act. Which steps reached the server is made certain by a test client
// that grabs the server at a chosen key press, before the kill.
func TestReceiptsOverMCP(t *testing.T) {
	// Partial: ctrl+shift held; the session ends once shift is down. The
	// presses went through, the releases cannot.
	t.Run("partial", func(t *testing.T) {
		e := newEnv(t, 640, 480)
		w := watchKeys(t, e, 2)
		cs := mcpClient(t, e)
		var obs desktopapi.Observation
		mcpCall(t, cs, "computer_observe", nil, &obs)
		go func() {
			<-w.grabbed
			e.d.Kill()
		}()
		var res desktopapi.ActResult
		mcpCall(t, cs, "computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "hold_key", "keys": "ctrl+shift",
			"duration_ms": 5000, "settle_ms": 0}, &res)
		r := res.Receipt
		if r.Status != desktopapi.Partial || r.Steps != 5 || r.Dispatched < 1 || r.Dispatched > 3 || r.Error == nil {
			t.Fatalf("receipt %+v", r)
		}
		if res.Observation != nil || res.ObservationError == nil {
			t.Fatalf("a fresh observation of an ended session: %+v", res)
		}
	})
	// Unknown: a long text, one step; the session ends after its first
	// character reached the server, so some of it may have been typed.
	t.Run("unknown", func(t *testing.T) {
		e := newEnv(t, 640, 480)
		w := watchKeys(t, e, 1)
		cs := mcpClient(t, e)
		var obs desktopapi.Observation
		mcpCall(t, cs, "computer_observe", nil, &obs)
		go func() {
			<-w.grabbed
			e.d.Kill()
		}()
		var res desktopapi.ActResult
		mcpCall(t, cs, "computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "type",
			"text": strings.Repeat("hostlink ", 400), "settle_ms": 0}, &res)
		r := res.Receipt
		if r.Status != desktopapi.Unknown || r.Steps != 1 || r.Dispatched != 0 || r.Error == nil {
			t.Fatalf("receipt %+v", r)
		}
		if res.Observation != nil || res.ObservationError == nil {
			t.Fatalf("a fresh observation of an ended session: %+v", res)
		}
	})
}
