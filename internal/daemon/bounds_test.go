package daemon

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
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
// the daemon's own registry. The table must name every bounded number.
func TestBounds(t *testing.T) {
	d, _ := openFull(t)
	named := map[string]bool{}
	for _, b := range bounds {
		named[b.op+"."+b.field] = true
	}
	for _, op := range d.Registry.Ops() {
		walkNumbers(op.InputSchema, op.Name, func(path string, _ *jsonschema.Schema) {
			if !named[path] {
				t.Errorf("%s is not in the bounds table", path)
			}
		})
	}
	argv0, _ := json.Marshal(os.Args[0])
	for _, b := range bounds {
		for _, tc := range []struct {
			v  float64
			ok bool
		}{
			{b.min, true}, {b.max, true}, {b.min - 1, false}, {b.max + 1, false},
			{b.min - 1e12, false}, {b.max + 1e12, false}, {-1e300, false}, {1e300, false},
		} {
			args := withNumber(t, strings.ReplaceAll(b.base, `"ARGV0"`, string(argv0)), b.field, tc.v)
			_, err := d.Registry.Call(context.Background(), ops.Caller{Transport: audit.IPC}, b.op, args, nil)
			invalid := errcode.CodeOf(err) == errcode.InvalidArgument
			if invalid == tc.ok {
				t.Errorf("%s %s = %s: %v", b.op, b.field, strconv.FormatFloat(tc.v, 'g', -1, 64), err)
			}
		}
	}
}

// withNumber sets field (dot-separated) of the JSON object base to v,
// written as an integer literal when it is one.
func withNumber(t *testing.T, base, field string, v float64) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	if f, ok := strings.CutSuffix(field, "[][]"); ok {
		// A list of points: the first point's first coordinate.
		m[f].([]any)[0].([]any)[0] = json.Number(strconv.FormatFloat(v, 'f', -1, 64))
		b, _ := json.Marshal(m)
		return b
	}
	parts := strings.Split(field, ".")
	obj := m
	for _, p := range parts[:len(parts)-1] {
		obj = obj[p].(map[string]any)
	}
	num := strconv.FormatFloat(v, 'f', -1, 64)
	if math.Abs(v) > 1e20 {
		num = strconv.FormatFloat(v, 'e', -1, 64)
	}
	obj[parts[len(parts)-1]] = json.Number(num)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
