package conformance

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseAdditions(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "PROTOCOL.md"))
	if err != nil {
		t.Fatal(err)
	}
	adds, err := ParseAdditions(md)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(adds["command_output"], "EXECUTE_COMMAND:COMMAND_RESULT.capture_id") || !slices.Contains(adds["shell_sandbox"], "SHELL_SANDBOX") {
		t.Errorf("%v", adds)
	}
	// Nothing lets hostlink send a HELLO upstream's parser rejects: HELLO
	// goes out before any grant.
	for c, ids := range adds {
		for _, id := range ids {
			if strings.HasPrefix(id, "HELLO") {
				t.Errorf("%s allows %s", c, id)
			}
		}
	}
	for _, md := range []string{
		"## Additions\n\nno table\n",
		"## Additions\n\n| c | a | h | p |\n|---|---|---|---|\n| x | a | `A` | p |\n",
		"## Additions\n\n| c | a | h | p |\n|---|---|---|---|\n| `x` | a | `not an id` | p |\n",
		"## Additions\n\n| c | a | h | p |\n|---|---|---|---|\n| `x` | a | `A` | p |\n| `x` | a | `B` | p |\n",
		"## Additions\n\n| c | a | h |\n|---|---|---|\n| `x` | a | `A` |\n",
	} {
		if _, err := ParseAdditions([]byte(md)); err == nil {
			t.Errorf("accepted %q", md)
		}
	}
}

// TestRecorder: what hostlink sends passes only as upstream's models
// allow it, or as an addition the connection granted.
func TestRecorder(t *testing.T) {
	adds := map[string][]string{"command_output": {"EXECUTE_COMMAND:COMMAND_RESULT.capture_id"}, "shell_sandbox": {"SHELL_SANDBOX"}}
	hello := `{"type":"HELLO","id":"h","ts":1,"payload":{"shim_version":"1","machine_id":"m","platform":"linux","arch":"x86_64","capabilities":["shell"],"allowed_root":null%s}}`
	ack := `{"type":"HELLO_ACK","id":"h","ts":1,"payload":{"granted_capabilities":[%s]}}`
	cmd := `{"type":"EXECUTE_COMMAND","id":"c","ts":1,"payload":{"command":"true"}}`
	result := `{"type":"COMMAND_RESULT","id":"c","ts":1,"pending_capacity":3,"payload":{"stdout":"","stderr":"","exit_code":0,"timed_out":false,"duration_seconds":0.1,"capture_id":"x"}}`
	for _, tt := range []struct {
		name     string
		frames   []string // "> " from hostlink, "< " from the platform
		problems int
	}{
		{"a HELLO of upstream's", []string{"> " + strings.Replace(hello, "%s", "", 1)}, 0},
		{"a HELLO with a field of hostlink's", []string{"> " + strings.Replace(hello, "%s", `,"shell_sandbox":{}`, 1)}, 1},
		{"an addition granted", []string{"< " + strings.Replace(ack, "%s", `"command_output"`, 1), "< " + cmd, "> " + result}, 0},
		{"an addition not granted", []string{"< " + strings.Replace(ack, "%s", `"shell"`, 1), "< " + cmd, "> " + result}, 1},
		{"an addition where another is allowed", []string{"< " + strings.Replace(ack, "%s", `"command_output"`, 1),
			"> " + strings.Replace(result, `"id":"c"`, `"id":"unasked"`, 1)}, 1},
		{"a message of hostlink's, granted", []string{"< " + strings.Replace(ack, "%s", `"shell_sandbox"`, 1), `> {"type":"SHELL_SANDBOX","id":"s","ts":1,"payload":{"mode":"workdir"}}`}, 0},
		{"a message of hostlink's, not granted", []string{"< " + strings.Replace(ack, "%s", "", 1), `> {"type":"SHELL_SANDBOX","id":"s","ts":1,"payload":{}}`}, 1},
		{"an error code of hostlink's", []string{"< " + strings.Replace(ack, "%s", "", 1), `> {"type":"ERROR","id":"e","ts":1,"payload":{"code":"APPROVAL_PENDING","message":"m"}}`}, 1},
		{"an error code of hostlink's, granted", []string{"< " + strings.Replace(ack, "%s", `"hostlink_errors"`, 1), `> {"type":"ERROR","id":"e","ts":1,"payload":{"code":"APPROVAL_PENDING","message":"m"}}`}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecorder(adds)
			for _, f := range tt.frames {
				r.Frame(1, "p", strings.HasPrefix(f, ">"), []byte(f[2:]))
			}
			if got := r.Problems(); len(got) != tt.problems {
				t.Fatalf("%d problems, want %d: %v", len(got), tt.problems, got)
			}
		})
	}
	// Grants are the connection's: another one has none.
	r := NewRecorder(adds)
	r.Frame(1, "p", false, []byte(strings.Replace(ack, "%s", `"command_output"`, 1)))
	r.Frame(2, "p", false, []byte(cmd))
	r.Frame(2, "p", true, []byte(result))
	if len(r.Problems()) != 1 || r.Sent("COMMAND_RESULT") != 1 {
		t.Errorf("%v", r.Problems())
	}
}
