package link

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/ops"
)

func TestBackoff(t *testing.T) {
	b := DefaultBackoff
	for n, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 60 * time.Second, 60 * time.Second} {
		for range 20 {
			d := b.Delay(n)
			if d < base || d >= base+min(5*time.Second, base) {
				t.Fatalf("attempt %d: delay %v outside [%v, %v)", n, d, base, base+min(5*time.Second, base))
			}
		}
	}
	if d := b.Delay(1000); d < 60*time.Second || d >= 65*time.Second {
		t.Errorf("attempt 1000: %v", d)
	}
}

func TestValidateURL(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"wss://platform.example/ws/local-executor", true},
		{"ws://127.0.0.1:7718/ws/local-executor", true},
		{"ws://[::1]:7718/ws/local-executor", true},
		{"ws://localhost:7718/ws/local-executor", true},
		{"ws://platform.example/ws/local-executor", false},
		{"ws://10.0.0.1/ws", false},
		{"http://127.0.0.1/ws", false},
		{"wss://user:pw@platform.example/ws", false},
		{"wss://platform.example/ws?token=x", false},
	} {
		if _, err := ValidateURL(tt.url); (err == nil) != tt.ok {
			t.Errorf("ValidateURL(%q): %v", tt.url, err)
		}
	}
}

func TestCutUTF8(t *testing.T) {
	s := "aé€"
	for n, want := range map[int64]string{0: "", 1: "a", 2: "a", 3: "aé", 5: "aé", 6: "aé€", 9: "aé€"} {
		if got := cutUTF8(s, n); got != want {
			t.Errorf("cutUTF8(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
}

// TestHelloAckDefaults: a HELLO_ACK that leaves fields out is read as
// upstream's model reads it: protocol 1.1 and upstream's limits (10 MiB,
// 30 s, 4), each lowered to the local one.
func TestHelloAckDefaults(t *testing.T) {
	for _, tt := range []struct {
		name    string
		payload string
		local   Limits
		want    Limits
		version string
		bad     bool
	}{
		{"all left out", `{"session_id":"s","granted_capabilities":["files"]}`,
			Limits{MaxFileSizeBytes: 1 << 30, CommandTimeoutSeconds: 600, MaxConcurrent: 16}, Limits{MaxFileSizeBytes: 10 << 20, CommandTimeoutSeconds: 30, MaxConcurrent: 4}, "1.1", false},
		{"local limits lower", `{"session_id":"s","granted_capabilities":[]}`,
			Limits{MaxFileSizeBytes: 1, CommandTimeoutSeconds: 1, MaxConcurrent: 1}, Limits{MaxFileSizeBytes: 1, CommandTimeoutSeconds: 1, MaxConcurrent: 1}, "1.1", false},
		{"given", `{"session_id":"s","granted_capabilities":[],"protocol_version":"1.0","max_file_size_bytes":5,"command_timeout_seconds":7,"max_concurrent":2}`,
			Limits{MaxFileSizeBytes: 1 << 30, CommandTimeoutSeconds: 600, MaxConcurrent: 16}, Limits{MaxFileSizeBytes: 5, CommandTimeoutSeconds: 7, MaxConcurrent: 2}, "1.0", false},
		{"an empty version", `{"session_id":"s","granted_capabilities":[],"protocol_version":""}`, Limits{}, Limits{}, "", true},
		{"a zero limit", `{"session_id":"s","granted_capabilities":[],"max_file_size_bytes":0}`, Limits{}, Limits{}, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{SessionID: "s", Local: tt.local}
			_, err := c.checkAck("h", []ops.Capability{ops.Files}, &wire.Envelope{Type: wire.TypeHelloAck, ID: "h", Payload: json.RawMessage(tt.payload)})
			if (err != nil) != tt.bad {
				t.Fatalf("err %v", err)
			}
			if tt.bad {
				return
			}
			if c.Limits() != tt.want || c.version.String() != tt.version {
				t.Errorf("limits %+v, version %s; want %+v, %s", c.Limits(), c.version, tt.want, tt.version)
			}
		})
	}
}

// TestWithGranted: hostlink's fields in upstream's replies reach only a
// connection that granted them, whether the reply is made now or replayed
// as recorded (for a connection that may have granted more).
func TestWithGranted(t *testing.T) {
	result := wire.CommandResult{Stdout: "x", CaptureID: "cap"}
	recorded, _ := json.Marshal(result)
	for _, tt := range []struct {
		name    string
		granted []ops.Capability
		typ     string
		payload any
		want    string
	}{
		{"capture_id granted", []ops.Capability{CapCommandOutput}, wire.TypeCommandResult, result, `"capture_id":"cap"`},
		{"capture_id not granted", nil, wire.TypeCommandResult, result, ""},
		{"capture_id replayed, not granted", nil, wire.TypeCommandResult, json.RawMessage(recorded), ""},
		{"pid granted", []ops.Capability{CapAckDetails}, wire.TypeAck, wire.AppLaunched{OK: true, PID: 7}, `"pid":7`},
		{"pid not granted", []ops.Capability{CapCommandOutput}, wire.TypeAck, wire.AppLaunched{OK: true, PID: 7}, ""},
		{"focused not granted", nil, wire.TypeAck, wire.WindowFocused{OK: true, Focused: true}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{granted: map[ops.Capability]bool{}}
			for _, g := range tt.granted {
				c.granted[g] = true
			}
			b, _ := json.Marshal(c.withGranted(tt.typ, tt.payload))
			var m map[string]any
			json.Unmarshal(b, &m)
			if tt.want == "" {
				for _, f := range []string{"capture_id", "pid", "focused"} {
					if _, ok := m[f]; ok {
						t.Fatalf("%s sent: %s", f, b)
					}
				}
				if tt.typ == wire.TypeAck && m["ok"] != true || tt.typ == wire.TypeCommandResult && m["stdout"] != "x" {
					t.Fatalf("%s", b)
				}
			} else if !strings.Contains(string(b), tt.want) {
				t.Fatalf("%s lacks %s", b, tt.want)
			}
		})
	}
}
