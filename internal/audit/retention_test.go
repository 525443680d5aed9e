package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openBounded(t testing.TB, dir string, maxBytes, maxTotal int64) *Log {
	t.Helper()
	l, err := Open(Options{Dir: dir, Key: testKey, MaxBytes: maxBytes, MaxTotalBytes: maxTotal, MachineID: "m-1", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func logBytes(t *testing.T, dir string) int64 {
	t.Helper()
	names, err := logFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// checkpointsIn returns the checkpoint records in dir.
func checkpointsIn(t *testing.T, dir string) []Line {
	t.Helper()
	lines, err := Tail(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var cps []Line
	for _, l := range lines {
		if l.Op == CheckpointOp {
			cps = append(cps, l)
		}
	}
	return cps
}

// TestRetention: with MaxTotalBytes the directory stays within it (plus
// the file being written), the oldest files go under checkpoints, and
// Verify still verifies what is left.
func TestRetention(t *testing.T) {
	const maxBytes, maxTotal = 2000, 7000
	dir := t.TempDir()
	l := openBounded(t, dir, maxBytes, maxTotal)
	for i := range 400 {
		if err := l.Append(record(i + 1)); err != nil {
			t.Fatal(err)
		}
		if n := logBytes(t, dir); n > maxTotal+maxBytes {
			t.Fatalf("after %d records the log holds %d bytes, over %d + %d", i+1, n, maxTotal, maxBytes)
		}
	}
	rep := mustVerify(t, dir)
	if rep.FirstSeq <= 1 || rep.LastSeq < 400 {
		t.Fatalf("report %+v: nothing was removed", rep)
	}
	cps := checkpointsIn(t, dir)
	if len(cps) == 0 {
		t.Fatal("no checkpoint record")
	}
	removed := cps[0].Details["removed"].([]any)[0].(map[string]any)
	if removed["file"] == "" || removed["last_mac"] == "" {
		t.Fatalf("checkpoint %+v", cps[0].Details)
	}
	t.Logf("%d records kept of %d (seq %d-%d) in %d files, %d bytes; %d checkpoints",
		rep.Records, rep.LastSeq, rep.FirstSeq, rep.LastSeq, len(rep.Files), logBytes(t, dir), len(cps))
	// Reopened, the log goes on and still verifies.
	l.Close()
	l = openBounded(t, dir, maxBytes, maxTotal)
	for i := range 50 {
		if err := l.Append(record(i)); err != nil {
			t.Fatal(err)
		}
	}
	mustVerify(t, dir)
}

// TestRetentionTampering: once retention has removed files, deleting
// another old one, or altering a checkpoint (to explain a deletion, say),
// fails Verify.
func TestRetentionTampering(t *testing.T) {
	src := t.TempDir()
	l := openBounded(t, src, 2000, 7000)
	for i := range 300 {
		if err := l.Append(record(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	mustVerify(t, src)
	names, _ := logFiles(src)
	copyDir := func() string {
		dir := t.TempDir()
		for _, n := range names {
			data, _ := os.ReadFile(filepath.Join(src, n))
			os.WriteFile(filepath.Join(dir, n), data, 0o600)
		}
		return dir
	}
	t.Run("delete the oldest file left", func(t *testing.T) {
		dir := copyDir()
		os.Remove(filepath.Join(dir, names[0]))
		rep, err := Verify(dir, "", testKey)
		if !errors.Is(err, ErrCorrupt) || rep.Failure.Reason != ReasonMissing {
			t.Fatalf("Verify = %v", err)
		}
	})
	t.Run("alter a checkpoint", func(t *testing.T) {
		dir := copyDir()
		var file string
		for _, n := range names {
			data, _ := os.ReadFile(filepath.Join(dir, n))
			if strings.Contains(string(data), CheckpointOp) {
				file = n
				// Claim a later record was the last one removed.
				i := strings.Index(string(data), `"last_seq":`) + len(`"last_seq":`)
				data[i]++
				os.WriteFile(filepath.Join(dir, n), data, 0o600)
				break
			}
		}
		rep, err := Verify(dir, "", testKey)
		if !errors.Is(err, ErrCorrupt) || rep.Failure.Reason != ReasonBadMAC || rep.Failure.File != file {
			t.Fatalf("Verify = %v (%+v)", err, rep.Failure)
		}
	})
}

// TestRetentionIdleWriter: a Log left idle while another Log's appends
// rotate its file away and retention removes it follows the checkpoint
// and goes on appending to the one chain.
func TestRetentionIdleWriter(t *testing.T) {
	dir := t.TempDir()
	idle := openBounded(t, dir, 2000, 7000)
	if err := idle.Append(record(0)); err != nil {
		t.Fatal(err)
	}
	busy := openBounded(t, dir, 2000, 7000)
	for i := range 300 {
		if err := busy.Append(record(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	if rep := mustVerify(t, dir); rep.FirstSeq <= 1 {
		t.Fatalf("the idle Log's file was not removed: %+v", rep)
	}
	if err := idle.Append(record(999)); err != nil {
		t.Fatalf("the idle Log, after retention removed its file: %v", err)
	}
	if err := busy.Append(record(1000)); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, dir)
	last, err := Tail(dir, 2)
	if err != nil || len(last) != 2 || last[0].RequestID != "req-999" || last[1].RequestID != "req-1000" {
		t.Fatalf("the chain does not end with both Logs' records: %+v %v", last, err)
	}
}
