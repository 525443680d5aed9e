package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
)

// helperEnv carries a helperSpec to a child process running
// TestHelperProcess.
const helperEnv = "HOSTLINK_AUDIT_TEST_HELPER"

type helperSpec struct {
	ID       int
	Dir      string // the audit directory
	Sync     string // where the child says it is ready and waits for "go"
	N        int
	MaxBytes int64
}

// TestHelperProcess is not a test: TestMultiProcess runs the test binary
// again with only this function and helperEnv set, as one of several
// writers. It opens the log, waits for the others, and appends N records
// tagged with its ID.
func TestHelperProcess(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("run by TestMultiProcess as a child process")
	}
	var h helperSpec
	if err := json.Unmarshal([]byte(spec), &h); err != nil {
		t.Fatal(err)
	}
	l, err := Open(Options{Dir: h.Dir, Key: testKey, MaxBytes: h.MaxBytes, MachineID: "m-1", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.WriteFile(filepath.Join(h.Sync, fmt.Sprintf("ready-%d", h.ID)), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tstest.WaitFor(t, 2*time.Minute, "the go signal", func() bool {
		_, err := os.Stat(filepath.Join(h.Sync, "go"))
		return err == nil
	})
	for i := range h.N {
		if i%7 == 0 {
			if err := l.Check(); err != nil {
				t.Fatalf("child %d, record %d: Check: %v", h.ID, i, err)
			}
		}
		err := l.Append(Record{
			Transport: "cli",
			Peer:      fmt.Sprintf("pid %d", os.Getpid()),
			Op:        "helper_append",
			Details:   map[string]any{"child": h.ID, "i": i},
		})
		if err != nil {
			t.Fatalf("child %d, record %d: %v", h.ID, i, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMultiProcess has several processes append to one directory at once,
// with a MaxBytes small enough that they rotate the file under each
// other, and checks that the result is one valid chain holding every
// record.
func TestMultiProcess(t *testing.T) {
	const children, each = 4, 40
	const total = children * each
	dir, syncDir := t.TempDir(), t.TempDir()
	type child struct {
		cmd  *exec.Cmd
		out  bytes.Buffer
		done chan error
	}
	var kids []*child
	for id := range children {
		spec, _ := json.Marshal(helperSpec{ID: id, Dir: dir, Sync: syncDir, N: each, MaxBytes: 2048})
		c := &child{done: make(chan error, 1)}
		c.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v")
		c.cmd.Env = append(os.Environ(), helperEnv+"="+string(spec))
		c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { c.done <- c.cmd.Wait() }()
		kids = append(kids, c)
	}
	report := func() {
		for id, c := range kids {
			t.Logf("child %d output:\n%s", id, c.out.String())
		}
	}
	// Start them together, once all have opened the log.
	var ready []string
	if !tstest.Eventually(2*time.Minute, func() bool {
		ready, _ = filepath.Glob(filepath.Join(syncDir, "ready-*"))
		return len(ready) == children
	}) {
		for _, c := range kids {
			c.cmd.Process.Kill()
			<-c.done
		}
		report()
		t.Fatalf("only %d of %d children opened the log", len(ready), children)
	}
	if err := os.WriteFile(filepath.Join(syncDir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	failed := false
	for id, c := range kids {
		if err := <-c.done; err != nil {
			t.Errorf("child %d: %v", id, err)
			failed = true
		}
	}
	if failed {
		report()
		t.FailNow()
	}

	rep := mustVerify(t, dir)
	if rep.Records != total || rep.FirstSeq != 1 || rep.LastSeq != total {
		t.Errorf("report = %+v, want %d records, seq 1..%d", rep, total, total)
	}
	if len(rep.Files) < 10 {
		t.Errorf("only %d files: want many rotations", len(rep.Files))
	}
	lines, err := Tail(dir, total)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != total {
		t.Fatalf("Tail returned %d records, want %d", len(lines), total)
	}
	next := make([]int, children) // each child's next record
	switches := 0
	for n, line := range lines {
		if line.Seq != uint64(n+1) {
			t.Fatalf("record %d has seq %d", n+1, line.Seq)
		}
		id, err1 := line.Details["child"].(json.Number).Int64()
		i, err2 := line.Details["i"].(json.Number).Int64()
		if err1 != nil || err2 != nil || id < 0 || id >= children {
			t.Fatalf("seq %d: details %v", line.Seq, line.Details)
		}
		if int(i) != next[id] {
			t.Fatalf("seq %d: child %d record %d, want its record %d", line.Seq, id, i, next[id])
		}
		next[id]++
		if n > 0 && lines[n-1].Details["child"] != line.Details["child"] {
			switches++
		}
	}
	for id, n := range next {
		if n != each {
			t.Errorf("child %d: %d records, want %d", id, n, each)
		}
	}
	t.Logf("%d records in %d files; the writer changed %d times", total, len(rep.Files), switches)
}

// TestTwoLogs has two Logs in one process append to one directory, in
// turn and concurrently, rotating under each other.
func TestTwoLogs(t *testing.T) {
	dir := t.TempDir()
	a, b := openLog(t, dir, 3000), openLog(t, dir, 3000)
	for i := range 30 {
		l := a
		if i%3 == 0 {
			l = b
		}
		if err := l.Check(); err != nil {
			t.Fatalf("record %d: Check: %v", i, err)
		}
		if err := l.Append(record(i)); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		l := []*Log{a, b}[g%2]
		wg.Go(func() {
			for i := range 15 {
				if err := l.Append(record(i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	rep := mustVerify(t, dir)
	if rep.Records != 30+8*15 || len(rep.Files) < 5 {
		t.Errorf("report = %+v, want %d records in ≥ 5 files", rep, 30+8*15)
	}
	for _, l := range []*Log{a, b} {
		if err := l.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFollowRotations checks that a Log that was idle while another
// rotated the file several times follows, and continues the chain.
func TestFollowRotations(t *testing.T) {
	dir := t.TempDir()
	a, b := openLog(t, dir, 1500), openLog(t, dir, 1500)
	appendN(t, b, 2)
	before := b.f
	appendN(t, a, 20)
	if rot, _ := listRotated(dir); len(rot) < 4 {
		t.Fatalf("%d rotations, want ≥ 4", len(rot))
	}
	if err := b.Check(); err != nil {
		t.Fatalf("Check after another Log rotated: %v", err)
	}
	if b.f == before {
		t.Error("Check did not reopen audit.log")
	}
	appendN(t, b, 1)
	if rep := mustVerify(t, dir); rep.LastSeq != 23 {
		t.Errorf("report = %+v, want 23 records", rep)
	}
	if same, err := sameFile(b.f, b.path); !same {
		t.Errorf("b does not append to audit.log (%v)", err)
	}
}

// appendN appends n records to l.
func appendN(t *testing.T, l *Log, n int) {
	t.Helper()
	for i := range n {
		if err := l.Append(record(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRotationByHand accepts a rotation done by someone else, as the rule
// has it: nothing is lost.
func TestRotationByHand(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 0)
	appendN(t, l, 3)
	rotateByHand(t, l, nil)
	if err := l.Check(); err != nil {
		t.Fatalf("Check after a rotation by hand: %v", err)
	}
	appendN(t, l, 2)
	if rep := mustVerify(t, dir); rep.Records != 5 || len(rep.Files) != 2 {
		t.Errorf("report = %+v, want 5 records in 2 files", rep)
	}
}

// rotateByHand renames audit.log to the next rotated name and writes data
// to a new audit.log.
func rotateByHand(t *testing.T, l *Log, data []byte) {
	t.Helper()
	next := l.nextRotated(time.Now())
	if err := os.Rename(l.path, filepath.Join(l.dir, next.String())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCatchUpDamage damages the log under an open Log, in ways that
// another writer's appends or rotation do not explain, and checks that
// Check and Append then fail, stickily.
func TestCatchUpDamage(t *testing.T) {
	// otherChain returns the lines of another chain, with the same key, of
	// n records.
	otherChain := func(t *testing.T, n int) []string {
		other := t.TempDir()
		writeLog(t, other, n, 0)
		data, err := os.ReadFile(filepath.Join(other, logName))
		if err != nil {
			t.Fatal(err)
		}
		return lineSplit(data)
	}
	appendTo := func(t *testing.T, path, s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	readLines := func(t *testing.T, path string) []string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return lineSplit(data)
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, l, peer *Log)
		file   string // "" if not an ErrCorrupt *Failure
		line   int
		reason Reason
	}{
		{"garbage appended", func(t *testing.T, l, _ *Log) {
			appendTo(t, l.path, "not json\n")
		}, logName, 5, ReasonUnparsable},
		{"garbage appended after a peer's record", func(t *testing.T, l, peer *Log) {
			appendN(t, peer, 1)
			appendTo(t, l.path, "not json\n")
		}, logName, 0, ReasonUnparsable},
		{"torn line appended", func(t *testing.T, l, _ *Log) {
			appendTo(t, l.path, `{"bytes":0,`)
		}, logName, 0, ReasonTruncated},
		{"truncated at a line boundary", func(t *testing.T, l, _ *Log) {
			lines := readLines(t, l.path)
			os.WriteFile(l.path, []byte(strings.Join(lines[:3], "")), 0o600)
		}, logName, 0, ReasonTruncated},
		{"earlier record replayed", func(t *testing.T, l, _ *Log) {
			appendTo(t, l.path, readLines(t, l.path)[1])
		}, logName, 5, ReasonSeqGap},
		{"next record of another chain appended", func(t *testing.T, l, _ *Log) {
			appendTo(t, l.path, otherChain(t, 5)[4])
		}, logName, 5, ReasonChainBreak},
		{"record with another key appended", func(t *testing.T, l, _ *Log) {
			lines := readLines(t, l.path)
			appendTo(t, l.path, strings.Replace(lines[3], `"seq":4`, `"seq":5`, 1))
		}, logName, 5, ReasonBadMAC},
		{"rotated, and audit.log replaced by a copy", func(t *testing.T, l, _ *Log) {
			data, _ := os.ReadFile(l.path)
			rotateByHand(t, l, data)
		}, logName, 1, ReasonSeqGap},
		{"rotated, and audit.log started by another chain", func(t *testing.T, l, _ *Log) {
			rotateByHand(t, l, []byte(otherChain(t, 5)[4]))
		}, logName, 1, ReasonChainBreak},
		{"rotated after a peer's torn line", func(t *testing.T, l, peer *Log) {
			appendN(t, peer, 1)
			appendTo(t, l.path, `{"bytes":0,`)
			rotateByHand(t, l, nil)
		}, "rotated", 0, ReasonTruncated},
		{"renamed to an older rotated name", func(t *testing.T, l, _ *Log) {
			rotateByHand(t, l, nil)
			if err := l.Check(); err != nil {
				t.Fatal(err)
			}
			appendN(t, l, 1)
			if err := os.Rename(l.path, filepath.Join(l.dir, logName+".20000101-000000")); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(l.path, nil, 0o600)
		}, "", 0, ""},
		{"renamed to another name", func(t *testing.T, l, _ *Log) {
			if err := os.Rename(l.path, l.path+".old"); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(l.path, nil, 0o600)
		}, "", 0, ""},
		{"rotated, and audit.log missing", func(t *testing.T, l, _ *Log) {
			rotateByHand(t, l, nil)
			if err := os.Remove(l.path); err != nil {
				t.Fatal(err)
			}
		}, "", 0, ""},
		{"a directory in its place", func(t *testing.T, l, _ *Log) {
			rotateByHand(t, l, nil)
			os.Remove(l.path)
			if err := os.Mkdir(l.path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l, peer := openLog(t, dir, 0), openLog(t, dir, 0)
			appendN(t, l, 4)
			if err := l.Check(); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, l, peer)
			err := l.Check()
			if err == nil {
				t.Fatal("Check succeeded")
			}
			var f *Failure
			if tt.file == "" {
				if errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "removed or replaced") && !strings.Contains(err.Error(), "removed while open") {
					t.Errorf("Check = %v, want a removed or replaced error", err)
				}
			} else {
				file := tt.file
				if file == "rotated" {
					rot, _ := listRotated(dir)
					file = rot[len(rot)-1].String()
				}
				if !errors.As(err, &f) || f.File != file || f.Line != tt.line || f.Reason != tt.reason {
					t.Errorf("Check = %v, want a %q *Failure at %s line %d", err, tt.reason, file, tt.line)
				}
			}
			if err2 := l.Append(record(9)); err2 != err {
				t.Errorf("Append after Check failed = %v, want the sticky %v", err2, err)
			}
			if err2 := l.Check(); err2 != err {
				t.Errorf("Check again = %v, want the sticky %v", err2, err)
			}
		})
	}
}

// TestLockTimeout holds audit.lock as an older hostlink would, for good.
func TestLockTimeout(t *testing.T) {
	defer func(d time.Duration) { lockTimeout = d }(lockTimeout)
	lockTimeout = 100 * time.Millisecond
	dir := t.TempDir()
	l := openLog(t, dir, 0)
	appendN(t, l, 1)
	holder, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := tryLock(holder); err != nil {
		t.Fatal(err)
	}
	if l2, err := Open(Options{Dir: dir, Key: testKey}); !errors.Is(err, ErrLocked) {
		if err == nil {
			l2.Close()
		}
		t.Fatalf("Open = %v, want ErrLocked", err)
	}
	if err := l.Append(record(2)); !errors.Is(err, ErrLocked) {
		t.Fatalf("Append = %v, want ErrLocked", err)
	}
	if err := l.Check(); err != nil {
		t.Fatalf("Check with nothing changed = %v", err)
	}
	// The waits given up on do not keep the lock once it is free, and the
	// error was not sticky: nothing was written.
	if err := unlock(holder); err != nil {
		t.Fatal(err)
	}
	l3 := openLog(t, dir, 0)
	appendN(t, l3, 1)
	appendN(t, l, 1)
	appendN(t, l3, 1)
	if rep := mustVerify(t, dir); rep.Records != 4 {
		t.Errorf("records = %d, want 4", rep.Records)
	}

	// A wait given up on is taken over by the next Append.
	if err := tryLock(holder); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(record(5)); !errors.Is(err, ErrLocked) {
		t.Fatalf("Append = %v, want ErrLocked", err)
	}
	lockTimeout = time.Minute
	time.AfterFunc(50*time.Millisecond, func() { unlock(holder) })
	appendN(t, l, 1)
	if rep := mustVerify(t, dir); rep.Records != 5 {
		t.Errorf("records = %d, want 5", rep.Records)
	}
}

// BenchmarkAppendTwoLogs alternates between two Logs on one directory, so
// that every Append catches up with a record the other wrote.
func BenchmarkAppendTwoLogs(b *testing.B) {
	dir := b.TempDir()
	logs := []*Log{openLog(b, dir, 0), openLog(b, dir, 0)}
	r := record(1)
	i := 0
	for b.Loop() {
		if err := logs[i%2].Append(r); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
