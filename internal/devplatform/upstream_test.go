package devplatform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/conformance"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/link/wire"
)

// TestUpstreamExecutor: the reference platform accepts the HELLO of
// upstream's executor as its models write it (every field, display_name,
// computer_use_features, recording_channels and the rest included, or
// protocol_version left out), and everything it sends that executor
// parses with upstream's models.
func TestUpstreamExecutor(t *testing.T) {
	m := conformance.Upstream()
	srv := devplatform.New("tok", devplatform.Config{PingIntervalSeconds: 0.05})
	var mu sync.Mutex
	var sent [][]byte
	srv.SetTap(func(f devplatform.TapFrame) {
		if !f.FromExecutor {
			mu.Lock()
			sent = append(sent, f.Frame)
			mu.Unlock()
		}
	})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	base := "ws" + strings.TrimPrefix(hs.URL, "http") + devplatform.ControlPath
	hello := map[string]any{"shim_version": "0.1.0", "machine_id": "mac-1", "display_name": "Alice's Mac", "platform": "darwin",
		"arch": "arm64", "screen_resolution": []int{2560, 1440}, "capabilities": []string{"directory_browse", "files", "computer_use"},
		"allowed_root": nil, "local_llm_models": []string{"llama3.2:3b"},
		"hardware_devices":      []any{map[string]any{"type": "serial", "port": "/dev/ttyUSB0", "desc": "Arduino Uno"}},
		"computer_use_features": []string{"screenshot.region", "window.list"}, "computer_use_features_coarse": []string{"screenshot", "windows"},
		"recording_channels": []string{"floor"}, "recording_routes": []string{"extract_then_cloud"}}
	for _, tt := range []struct {
		name, path string
		drop       string // a field left out, as upstream's model allows
	}{
		{"control", "", ""},
		{"data", "/chat-1", ""},
		{"no protocol_version", "/chat-2", "protocol_version"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := map[string]any{}
			for k, v := range hello {
				p[k] = v
			}
			if tt.path != "" {
				p["allowed_root"] = "/Users/alice/proj"
			}
			frame := m.Dump("HELLO", "h-"+tt.name, 1.5, p)
			if tt.drop != "" {
				frame = []byte(strings.Replace(string(frame), `"`+tt.drop+`":"1.1",`, "", 1))
				if strings.Contains(string(frame), `"`+tt.drop+`"`) {
					t.Fatalf("%s still in %s", tt.drop, frame)
				}
			}
			if _, _, d := m.Frame("", frame); len(d) > 0 {
				t.Fatalf("not a HELLO upstream's executor sends: %v", d)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ws, _, err := websocket.Dial(ctx, base+tt.path, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer tok"}}})
			if err != nil {
				t.Fatal(err)
			}
			c := wire.NewConn(ws)
			defer c.CloseNow()
			if err := c.SendRaw(ctx, frame, wire.MaxFrameBytes); err != nil {
				t.Fatal(err)
			}
			// HELLO_ACK, then the platform's PINGs, each answered.
			for i := 0; i < 3; i++ {
				b, err := c.ReadFrame(ctx)
				if err != nil {
					t.Fatal(err)
				}
				e, err := wire.DecodeEnvelope(b)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 && (e.Type != wire.TypeHelloAck || e.ID != "h-"+tt.name || !strings.Contains(string(e.Payload), `"computer_use"`)) {
					t.Fatalf("HELLO_ACK: %s", b)
				}
				if i > 0 && e.Type != wire.TypePing {
					t.Fatalf("not a PING: %s", b)
				}
				if e.Type == wire.TypePing {
					c.SendRaw(ctx, m.Dump("PONG", e.ID, 2, nil), wire.MaxFrameBytes)
				}
			}
		})
	}
	// The same machine again takes the control connection over: the
	// older one is told with SESSION_REVOKED.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 {
		ws, _, err := websocket.Dial(ctx, base, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer tok"}}})
		if err != nil {
			t.Fatal(err)
		}
		c := wire.NewConn(ws)
		defer c.CloseNow()
		c.SendRaw(ctx, m.Dump("HELLO", "again", 1, hello), wire.MaxFrameBytes)
		if _, err := c.ReadFrame(ctx); err != nil {
			t.Fatal(err)
		}
	}
	revoked := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range sent {
			if strings.Contains(string(b), `"SESSION_REVOKED"`) {
				return true
			}
		}
		return false
	}
	for !revoked() {
		select {
		case <-ctx.Done():
			t.Fatal("no SESSION_REVOKED")
		case <-time.After(10 * time.Millisecond):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, b := range sent {
		if _, _, d := m.Frame("", b); len(d) > 0 {
			t.Errorf("upstream's executor rejects %s: %v", b, d)
		}
	}
}
