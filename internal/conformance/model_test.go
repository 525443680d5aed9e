package conformance

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestModelLoads(t *testing.T) {
	m := Upstream()
	if m.Upstream.Repository != "Significant-Gravitas/autogpt-local-executor" || len(m.Upstream.Commit) != 40 {
		t.Fatalf("provenance: %+v", m.Upstream)
	}
	// Upstream's MessageType has 60 members at that commit, each with
	// one envelope model.
	if len(m.Messages) != 60 {
		t.Errorf("%d message types, want 60", len(m.Messages))
	}
	for typ, msg := range m.Messages {
		if msg.From == "platform" && typ != "HELLO_ACK" && typ != "SESSION_REVOKED" && len(msg.Replies) == 0 {
			t.Errorf("%s: a request without replies", typ)
		}
	}
	if !m.ErrorCodes["PERMISSION_PENDING"] || len(m.ErrorCodes) != 35 {
		t.Errorf("%d error codes", len(m.ErrorCodes))
	}
}

func TestParseModelRefuses(t *testing.T) {
	base := func(models string) string {
		return `{"upstream":{"commit":"0ae896ead7692a7d8d2e97df2cfc307c14048e15"},"envelope":{"fields":{}},` +
			`"messages":{"A":{"from":"shim","payload":"P"}},"models":` + models + `}`
	}
	for _, bad := range []string{
		base(`{}`), // no model P
		base(`{"P":{"fields":{"x":{"type":"Nope"}}}}`),
		base(`{"P":{"fields":{"x":{"type":"list[str"}}}}`),
		base(`{"P":{"fields":{"x":{"type":"dict[int, str]"}}}}`),
		base(`{"P":{"fields":{"x":{"type":"str","maxlen":3}}}}`),
		base(`{"P":{"fields":{"x":{}}}}`),
		base(`{"P":{"fields":{"x":{"type":"str"}},"aliases":{"y":"z"}}}`),
		base(`{"P":{"fields":{"x":{"type":"str"}},"rules":[{"requires":["x","y"]}]}}`),
		strings.Replace(base(`{"P":{"fields":{}}}`), "0ae896ead7692a7d8d2e97df2cfc307c14048e15", "main", 1),
	} {
		if _, err := parseModel([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestTypeSyntax(t *testing.T) {
	for _, s := range []string{"str", "int | None", "list[dict[str, any]]", "tuple[int, int, int, int] | None",
		`"up" | "down" | None`, `list["shift" | "ctrl"] | None`, "dict[str, str]", "Platform"} {
		ty, err := parseType(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if ty.String() != s {
			t.Errorf("%s reads back as %s", s, ty)
		}
	}
}

// frame is an envelope around payload.
func frame(typ, payload string) []byte {
	return []byte(`{"type":"` + typ + `","id":"abc","ts":1.0,"payload":` + payload + `}`)
}

// TestFrame holds the model to what upstream's own tests say its parser
// accepts and rejects (tests/test_protocol.py), and to the case the model
// was written for: a HELLO with a field upstream does not define.
func TestFrame(t *testing.T) {
	m := Upstream()
	hello := `{"shim_version":"1","machine_id":"m","platform":"linux","arch":"x86_64","capabilities":["files"],"allowed_root":null`
	ack := `{"session_id":"s1","granted_capabilities":["shell","files"],"max_file_size_bytes":1024,"command_timeout_seconds":5,"max_concurrent":2`
	for _, tt := range []struct {
		name  string
		frame []byte
		want  []string
	}{
		{"ping", frame("PING", `{}`), nil},
		{"ping without a payload", []byte(`{"type":"PING","id":"abc","ts":1}`), nil},
		{"a version", []byte(`{"type":"PING","id":"abc","ts":1.0,"version":"1.4","payload":{}}`), nil},
		{"hello ack", frame("HELLO_ACK", ack+`}`), nil},
		{"hello ack, a zero limit", frame("HELLO_ACK", ack+`,"max_concurrent":0}`), []string{"HELLO_ACK.max_concurrent!bounds"}},
		{"hello ack, a fractional timeout", frame("HELLO_ACK", strings.Replace(ack, `"command_timeout_seconds":5`, `"command_timeout_seconds":1.5`, 1)+`}`),
			[]string{"HELLO_ACK.command_timeout_seconds!type"}},
		{"hello ack, an integral float", frame("HELLO_ACK", strings.Replace(ack, `"command_timeout_seconds":5`, `"command_timeout_seconds":5.0`, 1)+`}`), nil},
		{"a half reference pair", frame("DIRECTORY_LIST_REQUEST", `{"browse_id":"b","directory_ref":null}`), []string{"DIRECTORY_LIST_REQUEST!both_or_neither"}},
		{"a cursor alone", frame("DIRECTORY_LIST_REQUEST", `{"browse_id":null,"directory_ref":null,"cursor":"c"}`), []string{"DIRECTORY_LIST_REQUEST!requires"}},
		{"a session id escaping the path", frame("ATTACH_SESSION", `{"session_id":"../control?admin=true","browse_id":"b","directory_ref":"r"}`),
			[]string{"ATTACH_SESSION.session_id!pattern"}},
		{"argv", frame("EXECUTE_COMMAND", `{"argv":["ls","-la"],"command":null,"shell":"auto","cwd":"/tmp","timeout_seconds":5,"env":{}}`), nil},
		{"a zero timeout", frame("EXECUTE_COMMAND", `{"argv":["echo"],"timeout_seconds":0}`), []string{"EXECUTE_COMMAND.timeout_seconds!bounds"}},
		{"an unknown shell", frame("EXECUTE_COMMAND", `{"command":"x","shell":"fish"}`), []string{"EXECUTE_COMMAND.shell!type"}},
		{"an unknown type", frame("BOGUS", `{}`), []string{"BOGUS"}},
		{"no id", []byte(`{"type":"PING","ts":1.0,"payload":{}}`), []string{"envelope.missing.id"}},
		{"an envelope field", []byte(`{"type":"PING","id":"x","ts":1.0,"payload":{},"idempotency_key":"k"}`), []string{"envelope.idempotency_key"}},
		{"an extra payload field", frame("PING", `{"unexpected":"value"}`), []string{"PING.unexpected"}},
		{"a payload that is not an object", frame("FILE_READ", `[]`), []string{"FILE_READ!type"}},
		{"hello", frame("HELLO", hello+`}`), nil},
		{"hello as upstream dumps it", frame("HELLO", hello+`,"display_name":"","screen_resolution":[2560,1440],"local_llm_models":[],`+
			`"hardware_devices":[{"type":"serial","port":"/dev/ttyUSB0"}],"computer_use_features":[],"computer_use_features_coarse":[],`+
			`"recording_channels":["floor"],"recording_routes":["extract_then_cloud"],"protocol_version":"1.1"}`), nil},
		{"hello without allowed_root", frame("HELLO", strings.Replace(hello, `,"allowed_root":null`, "", 1)+`}`), []string{"HELLO.missing.allowed_root"}},
		{"hello with shell_sandbox", frame("HELLO", hello+`,"shell_sandbox":{"mode":"workdir"}}`), []string{"HELLO.shell_sandbox"}},
		{"hello, a long display name", frame("HELLO", hello+`,"display_name":"`+strings.Repeat("é", 129)+`"}`), []string{"HELLO.display_name!length"}},
		{"hello, 128 characters", frame("HELLO", hello+`,"display_name":"`+strings.Repeat("é", 128)+`"}`), nil},
		{"hello, a platform upstream lacks", frame("HELLO", strings.Replace(hello, `"linux"`, `"freebsd"`, 1)+`}`), []string{"HELLO.platform!type"}},
		{"a screen of three numbers", frame("HELLO", hello+`,"screen_resolution":[1,2,3]}`), []string{"HELLO.screen_resolution!type"}},
		{"a nested field", frame("FILE_LIST_RESPONSE", `{"entries":[{"name":"a","path":"/a","is_file":true,"is_dir":false,"is_symlink":false,"x":1}]}`),
			[]string{"FILE_LIST_RESPONSE.entries[].x"}},
		{"a nested model's default", frame("SCREENSHOT_RESPONSE", `{"image_base64":"","width":1,"height":1,"meta":{"origin":[0,0],"display_id":0,"scale":1}}`),
			[]string{"SCREENSHOT_RESPONSE.meta.scale"}},
		{"an ack with more than ok", frame("ACK", `{"ok":true,"pid":7}`), []string{"ACK.pid"}},
		{"any error code", frame("ERROR", `{"code":"APPROVAL_PENDING","message":"m","fatal":false,"details":{"x":[1]}}`), nil},
		{"a window focus by alias", frame("WINDOW_FOCUS", `{"window_id":"w","raise_":false}`), nil},
		{"permissions", frame("PERMISSIONS_CHECK_RESPONSE", `{"permissions":{"a":"granted","b":"maybe"}}`), []string{"PERMISSIONS_CHECK_RESPONSE.permissions{}!type"}},
		{"too many entries", frame("DIRECTORY_LIST_RESPONSE", `{"browse_id":"b","entries":[`+strings.Repeat(`{"directory_ref":"r","name":"n","path":"/p"},`, 200)+
			`{"directory_ref":"r","name":"n","path":"/p"}],"expires_at":1}`), []string{"DIRECTORY_LIST_RESPONSE.entries!length"}},
		{"an empty name", frame("DIRECTORY_LIST_RESPONSE", `{"browse_id":"b","entries":[{"directory_ref":"r","name":"","path":"/p"}],"expires_at":1}`),
			[]string{"DIRECTORY_LIST_RESPONSE.entries[].name!length"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, diffs := m.Frame("", tt.frame)
			var got []string
			for _, d := range diffs {
				if !d.Rejected {
					t.Errorf("%s is not a rejection", d.ID)
				}
				got = append(got, d.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDump: a request as upstream's platform writes it has every field,
// and parses.
func TestDump(t *testing.T) {
	m := Upstream()
	b := m.Dump("FILE_READ", "r1", 1.5, map[string]any{"path": "a.txt"})
	var f struct {
		Version         string         `json:"version"`
		PendingCapacity *int           `json:"pending_capacity"`
		Payload         map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"path": "a.txt", "encoding": "utf-8", "format": "text", "offset": float64(0), "length": nil}
	if f.Version != "1.1" || len(f.Payload) != len(want) {
		t.Fatalf("%s", b)
	}
	for k, v := range want {
		if f.Payload[k] != v {
			t.Errorf("%s = %v, want %v", k, f.Payload[k], v)
		}
	}
	if _, _, d := m.Frame("", b); len(d) > 0 {
		t.Errorf("the dump does not parse: %v", d)
	}
	// Nested models are dumped whole too.
	b = m.Dump("LOCAL_LLM_COMPLETION", "r2", 1, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	if !strings.Contains(string(b), `"stream":true`) || !strings.Contains(string(b), `"max_tokens":1024`) {
		t.Errorf("%s", b)
	}
	if _, _, d := m.Frame("", b); len(d) > 0 {
		t.Errorf("the dump does not parse: %v", d)
	}
	// An alias is dumped under the name the model reads.
	b = m.Dump("WINDOW_FOCUS", "r3", 1, map[string]any{"window_id": "w", "raise_": false})
	if _, _, d := m.Frame("", b); len(d) > 0 || !strings.Contains(string(b), `"raise_":false`) || strings.Contains(string(b), `"raise":`) {
		t.Errorf("%s: %v", b, d)
	}
}
