package audit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
)

// unsyncedNow reports whether l holds a deferred record not yet synced.
func unsyncedNow(l *Log) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unsynced
}

// TestDeferredSync checks each way a deferred record gets synced: the
// timer, a later synced record, and Close.
func TestDeferredSync(t *testing.T) {
	tests := []struct {
		name string
		then func(t *testing.T, l *Log)
	}{
		{"timer", func(t *testing.T, l *Log) {
			tstest.WaitFor(t, 20*SyncDelay, "the deferred record's sync", func() bool { return !unsyncedNow(l) })
		}},
		{"synced record", func(t *testing.T, l *Log) {
			if err := l.Append(record(2)); err != nil {
				t.Fatal(err)
			}
			if unsyncedNow(l) {
				t.Fatal("a synced record left an earlier deferred one unsynced")
			}
		}},
		{"close", func(t *testing.T, l *Log) {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if unsyncedNow(l) {
				t.Fatal("Close left a deferred record unsynced")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir, 4096)
			r := record(1)
			r.Deferred = true
			if err := l.Append(r); err != nil {
				t.Fatal(err)
			}
			if !unsyncedNow(l) {
				t.Fatal("a deferred record was synced at once")
			}
			tt.then(t, l)
			l.Close()
			if rep := mustVerify(t, dir); rep.Records < 1 {
				t.Fatalf("report %+v", rep)
			}
		})
	}
}

const deferredHelperEnv = "HOSTLINK_AUDIT_DEFERRED_HELPER"

// TestDeferredHelperProcess is not a test: TestDeferredSurvivesKill runs
// it in a child that appends one deferred record, says so, and waits to be
// killed.
func TestDeferredHelperProcess(t *testing.T) {
	dir := os.Getenv(deferredHelperEnv)
	if dir == "" {
		t.Skip("run by TestDeferredSurvivesKill as a child process")
	}
	l, err := Open(Options{Dir: dir, Key: testKey, MachineID: "m-1", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	r := record(7)
	r.Deferred = true
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "appended"), nil, 0o600)
	time.Sleep(time.Minute)
}

// TestDeferredSurvivesKill kills a process right after a deferred Append
// returned: the record must be in the log, because Append wrote it before
// returning even though it had not synced it.
func TestDeferredSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeferredHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), deferredHelperEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	if !tstest.Eventually(time.Minute, func() bool {
		_, err := os.Stat(filepath.Join(dir, "appended"))
		return err == nil
	}) {
		cmd.Process.Kill()
		t.Fatal("the child never appended")
	}
	cmd.Process.Kill()
	cmd.Wait()
	rep := mustVerify(t, dir)
	if rep.Records != 1 {
		t.Fatalf("after kill: %+v, want the one deferred record", rep)
	}
	lines, err := Tail(dir, 1)
	if err != nil || len(lines) != 1 || lines[0].RequestID != "req-7" {
		t.Fatalf("tail: %+v %v", lines, err)
	}
}
