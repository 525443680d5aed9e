package companion

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/connlimit"
)

// TestConnectionLimits: at the per-address limit (2 here), a connected
// companion and a connection that never said hello fill the slots; a
// newcomer gets in by closing the one that never said hello, although the
// companion's connection is older, and the companion stays connected.
func TestConnectionLimits(t *testing.T) {
	r := newRigWith(t, false, func(o *RuntimeOptions) { o.limits = connlimit.Limits{Max: 16, PerPeer: 2} })
	r.companion(HostOptions{Credential: r.pair()})
	before := r.rt.Sessions()
	ctx := context.Background()
	dial := func() *websocket.Conn {
		t.Helper()
		ws, _, err := websocket.Dial(ctx, "ws://"+r.addr+"/companion", nil)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		return ws
	}
	silent := dial()
	dial() // the newcomer: admitted, so room was made
	// The one that never said hello is closed: made room with, or at the
	// latest at its handshake timeout; which of the two the companion's
	// session below tells.
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, _, err := silent.Read(rctx); err == nil || rctx.Err() != nil {
		t.Fatalf("the silent connection: %v", err)
	}
	after := r.rt.Sessions()
	if len(after) != 1 || len(before) != 1 || after[0].ID != before[0].ID || !after[0].Connected.Equal(before[0].Connected) {
		t.Fatalf("%d companions before, %d after, or another session: the companion's connection was closed to make room", len(before), len(after))
	}
}
