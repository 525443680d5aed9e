package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestLineJSONIsTheLineOnDisk: a tailed line encodes back to the bytes of
// its line on disk, so `audit tail --json` shows the on-disk field names.
func TestLineJSONIsTheLineOnDisk(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 0)
	recs := []Record{record(1), record(2), {Transport: "internal", Op: "daemon_start", Code: "OK"},
		{Transport: "mcp-http", Op: "write_file", Code: "APPROVAL_DENIED", Paths: []string{"a<b>&c.txt"},
			Details: map[string]any{"nested": map[string]any{"z": 1, "a": []any{"x", 2.5}}, "big": int64(1) << 60}}}
	for _, r := range recs {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	disk, err := os.ReadFile(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Split(bytes.TrimSuffix(disk, []byte("\n")), []byte("\n"))
	lines, err := Tail(dir, len(recs))
	if err != nil || len(lines) != len(want) {
		t.Fatalf("tail: %d lines, %v", len(lines), err)
	}
	for i, line := range lines {
		got, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[i]) {
			t.Errorf("line %d:\n got %s\nwant %s", i, got, want[i])
		}
		var back Line
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(back); !bytes.Equal(again, got) {
			t.Errorf("line %d decoded and encoded again:\n got %s\nwant %s", i, again, got)
		}
	}
}
