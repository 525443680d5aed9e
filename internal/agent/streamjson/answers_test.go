package streamjson

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestAnswered(t *testing.T) {
	input := json.RawMessage(`{"questions":[{"question":"Which colour?","options":[{"label":"red"},{"label":"blue"}]},
		{"question":"Which sizes?","multiSelect":true,"options":[{"label":"S"},{"label":"M"}]}],"extra":1}`)
	got := answered(input, map[string][]string{"q1": {"blue"}, "q2": {"S", "M"}})
	want := map[string]string{"Which colour?": "blue", "Which sizes?": "S, M"}
	if !reflect.DeepEqual(got["answers"], want) || got["extra"] != float64(1) || got["questions"] == nil {
		t.Fatalf("answered = %v", got)
	}
}

func TestSummary(t *testing.T) {
	for _, c := range []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"Bash", map[string]any{"command": "go test"}, "run a command: go test"},
		{"Write", map[string]any{"file_path": "/w/a.txt"}, "Write /w/a.txt"},
		{"Glob", map[string]any{"path": "src"}, "Glob src"},
		{"WebFetch", map[string]any{"url": "http://x"}, "use WebFetch"},
	} {
		if got := summary(c.tool, c.input); got != c.want {
			t.Errorf("summary(%s) = %q, want %q", c.tool, got, c.want)
		}
	}
}
