package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// TestRecorded: a record's time is its call's end, never before the
// record before it.
func TestRecorded(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 4, 52, 53, 0, time.UTC)
	lines := []Line{
		{Record: Record{Time: t0}},
		{Record: Record{Time: t0.Add(time.Second)}},                                        // an approval asked
		{Record: Record{Time: t0.Add(20 * time.Second)}},                                   // and decided
		{Record: Record{Time: t0.Add(500 * time.Millisecond), Duration: 20 * time.Second}}, // the call that waited
		{Record: Record{Time: t0.Add(20*time.Second + 300*time.Millisecond)}},              // recorded before that call's record was
	}
	want := []time.Time{t0, t0.Add(time.Second), t0.Add(20 * time.Second), t0.Add(20*time.Second + 500*time.Millisecond), t0.Add(20*time.Second + 500*time.Millisecond)}
	got := Recorded(lines)
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("record %d: %v, want %v", i, got[i], want[i])
		}
	}
}
