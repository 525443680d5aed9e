package daemon

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hostlink/hostlink/internal/ops/opstest"
)

// TestEveryNumberIsBounded: every number any operation takes (offsets,
// lengths, counts, durations, sizes) declares its bounds in the request's
// schema (`min:` and `max:` tags), so that the registry refuses a value
// out of range before it is decoded, let alone converted.
func TestEveryNumberIsBounded(t *testing.T) {
	d, _ := openFull(t)
	for _, op := range d.Registry.Ops() {
		walkNumbers(op.InputSchema, op.Name, func(path string, s *jsonschema.Schema) {
			if s.Minimum == nil || s.Maximum == nil {
				t.Errorf("%s: no bounds (add min and max tags)", path)
			}
		})
	}
}

func walkNumbers(s *jsonschema.Schema, path string, f func(string, *jsonschema.Schema)) {
	if s == nil {
		return
	}
	types := append([]string{s.Type}, s.Types...)
	for _, ty := range types {
		if ty == "integer" || ty == "number" {
			f(path, s)
			break
		}
	}
	for name, p := range s.Properties {
		walkNumbers(p, path+"."+name, f)
	}
	walkNumbers(s.Items, path+"[]", f)
}

// bounded is one number of one operation: base arguments that are valid
// apart from it, and the field (dot-separated into nested objects) with
// its bounds.
type bounded struct {
	op       string
	base     string
	field    string
	min, max float64
}

// maxJSONInt is 2^53-1, the largest integer JSON carries exactly: the
// bound of offsets and sequence numbers.
const maxJSONInt = 1<<53 - 1

var bounds = []bounded{
	{"read_file", `{"path":"f.txt"}`, "offset", 0, maxJSONInt},
	{"read_file", `{"path":"f.txt"}`, "length", 0, maxJSONInt},
	{"list_directory", `{}`, "max_entries", 0, 100000},
	{"find_files", `{"pattern":"**"}`, "max_results", 0, 100000},
	{"search_text", `{"query":"x"}`, "max_matches", 0, 100000},
	{"run_command", `{"argv":["ARGV0","-test.run=^$"]}`, "timeout_seconds", 0, 604800},
	{"start_command", `{"argv":["ARGV0","-test.run=^$"]}`, "timeout_seconds", 0, 604800},
	{"kill_command", `{"capture_id":"cap_none"}`, "grace_seconds", 0, 60},
	{"list_commands", `{}`, "limit", 0, 500},
	{"read_command_output", `{"capture_id":"cap_none","stream":"stdout"}`, "offset", 0, maxJSONInt},
	{"read_command_output", `{"capture_id":"cap_none","stream":"stdout"}`, "length", 0, 65536},
	{"companion_run_command", `{"argv":["true"]}`, "timeout_seconds", 0, 604800},
	{"computer_observe", `{}`, "monitor", -1, 64},
	{"computer_observe", `{}`, "quality", 0, 100},
	{"computer_observe", `{"region":{"observation_id":"obs_none","x":0,"y":0,"w":1,"h":1}}`, "region.x", 0, 1 << 20},
	{"computer_observe", `{"region":{"observation_id":"obs_none","x":0,"y":0,"w":1,"h":1}}`, "region.y", 0, 1 << 20},
	{"computer_observe", `{"region":{"observation_id":"obs_none","x":0,"y":0,"w":1,"h":1}}`, "region.w", 1, 1 << 20},
	{"computer_observe", `{"region":{"observation_id":"obs_none","x":0,"y":0,"w":1,"h":1}}`, "region.h", 1, 1 << 20},
	{"computer_act", `{"observation_id":"obs_none","action":"move"}`, "x", 0, 1 << 20},
	{"computer_act", `{"observation_id":"obs_none","action":"move"}`, "y", 0, 1 << 20},
	{"computer_act", `{"observation_id":"obs_none","action":"click"}`, "count", 0, 3},
	{"computer_act", `{"observation_id":"obs_none","action":"drag","path":[[0,0],[1,1]]}`, "path[][]", 0, 1 << 20},
	{"computer_act", `{"observation_id":"obs_none","action":"scroll"}`, "dx", -120000, 120000},
	{"computer_act", `{"observation_id":"obs_none","action":"scroll"}`, "dy", -120000, 120000},
	{"computer_act", `{"observation_id":"obs_none","action":"hold_key","keys":"a"}`, "duration_ms", 0, 5000},
	{"computer_act", `{"observation_id":"obs_none","action":"move"}`, "settle_ms", 0, 5000},
	{"computer_clipboard_read", `{}`, "max_bytes", 0, 1 << 30},
	{"read_agent_task_events", `{"task_id":"task_none"}`, "after_seq", 0, maxJSONInt},
	{"read_agent_task_events", `{"task_id":"task_none"}`, "max_events", 0, 500},
	{"read_agent_task_result", `{"task_id":"task_none"}`, "offset", 0, maxJSONInt},
	{"read_agent_task_result", `{"task_id":"task_none"}`, "max_bytes", 0, 1 << 20},
}

// TestBounds calls each operation with each number at its bounds (then
// the call is not refused as invalid: it runs, or fails for another
// reason), just past them and far past them (INVALID_ARGUMENT), through
// the daemon's own registry. An operation added later tests its own with
// opstest.Bounds.
func TestBounds(t *testing.T) {
	d, _ := openFull(t)
	argv0, _ := json.Marshal(os.Args[0])
	for _, b := range bounds {
		opstest.Bounds(t, d.Registry, b.op, strings.ReplaceAll(b.base, `"ARGV0"`, string(argv0)), b.field, b.min, b.max)
	}
}
