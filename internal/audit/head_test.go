package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
)

// copyLog copies the log files and the head of src into a new directory.
func copyLog(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	names, err := logFiles(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append(names, headName) {
		data, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cutTo cuts the log in dir back to its first k records, at a line
// boundary: the file holding record k ends with it, and every newer file
// is removed, or with empty, left empty.
func cutTo(t *testing.T, dir string, k int, empty bool) {
	t.Helper()
	names, err := logFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, n := range names {
		p := filepath.Join(dir, n)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := lineSplit(data)
		keep := min(len(lines), k-kept)
		kept += keep
		switch {
		case keep == len(lines):
			continue
		case keep == 0 && !empty:
			err = os.Remove(p)
		default:
			err = os.WriteFile(p, []byte(strings.Join(lines[:keep], "")), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// wantFailure checks that Verify fails in dir for reason.
func wantFailure(t *testing.T, dir string, reason Reason) Report {
	t.Helper()
	rep, err := Verify(dir, "", testKey)
	if !errors.Is(err, ErrCorrupt) || rep.Failure == nil || rep.Failure.Reason != reason {
		t.Fatalf("Verify = %v (report %+v), want a %q failure", err, rep, reason)
	}
	return rep
}

// TestCutAtEveryBoundary is finding 6 of issue #37: with the key in place,
// the log cut back to its first k of n records verified for every k, and
// a daemon restarted on it started a chain of its own that verified too.
// Now Verify finds the head past the end of the log, a restart continues
// from the head with a gap record, and Verify reports that record from
// then on. The cut removes the newer files, or leaves them empty.
func TestCutAtEveryBoundary(t *testing.T) {
	const n = 14
	src := t.TempDir()
	writeLog(t, src, n, 1200) // about three records a file
	if names, _ := logFiles(src); len(names) < 4 {
		t.Fatalf("want several files, got %v", names)
	}
	mustVerify(t, src)
	for _, empty := range []bool{false, true} {
		for k := range n {
			t.Run(fmt.Sprintf("k=%d/empty=%v", k, empty), func(t *testing.T) {
				dir := copyLog(t, src)
				cutTo(t, dir, k, empty)
				rep := wantFailure(t, dir, ReasonCut)
				if rep.Failure.File != headName || (k > 0 && rep.LastSeq != uint64(k)) {
					t.Errorf("failure %v, last seq %d; want the head named, last seq %d", rep.Failure, rep.LastSeq, k)
				}
				// A restart continues from the head and says why.
				l := openLog(t, dir, 1200)
				appendN(t, l, 1)
				l.Close()
				rep = wantFailure(t, dir, ReasonCut)
				if len(rep.Gaps) != 1 || rep.LastSeq != n+2 || rep.Failure.File == headName {
					t.Fatalf("after a restart: %+v, want one gap record and seq %d last", rep, n+2)
				}
				tail, err := Tail(dir, 2)
				if err != nil {
					t.Fatal(err)
				}
				if g := tail[0]; g.Op != GapOp || g.Seq != n+1 || g.Details["reason"] != GapRecordsMissing || fmt.Sprint(g.Details["found_seq"]) != fmt.Sprint(k) {
					t.Errorf("the restart's first record is %+v, want a gap record at seq %d that found seq %d", g, n+1, k)
				}
				if !strings.Contains(rep.Failure.Detail, fmt.Sprintf("records %d-%d were cut off", k+1, n)) {
					t.Errorf("failure %q does not name the records cut off", rep.Failure.Detail)
				}
			})
		}
	}
}

// TestCutEverything: with every log file deleted, the head still tells.
func TestCutEverything(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 5, 1200)
	names, _ := logFiles(dir)
	for _, n := range names {
		os.Remove(filepath.Join(dir, n))
	}
	wantFailure(t, dir, ReasonCut)
	l := openLog(t, dir, 0)
	l.Close()
	rep := wantFailure(t, dir, ReasonCut)
	if rep.FirstSeq != 6 || len(rep.Gaps) != 1 {
		t.Errorf("report %+v, want the gap record as seq 6", rep)
	}
}

// TestHeadLost: a missing head, one written with another key (another
// machine's) and one altered all fail Verify; a restart records that it
// had none and continues the chain from the files.
func TestHeadLost(t *testing.T) {
	other := t.TempDir()
	l, err := Open(Options{Dir: other, Key: bytes.Repeat([]byte{7}, KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 4)
	l.Close()
	foreign, err := os.ReadFile(filepath.Join(other, headName))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	writeLog(t, src, 4, 0)
	for _, tt := range []struct {
		name   string
		tamper func(path string) error
		reason string
	}{
		{"deleted", os.Remove, GapHeadMissing},
		{"from another key", func(p string) error { return os.WriteFile(p, foreign, 0o600) }, GapHeadInvalid},
		{"altered", func(p string) error {
			data, _ := os.ReadFile(p)
			for i, s := range [][]byte{data[:headSlot], data[headSlot:]} {
				j := bytes.IndexByte(s, ' ') + 1 // the seq's first digit
				data[i*headSlot+j]++
			}
			return os.WriteFile(p, data, 0o600)
		}, GapHeadInvalid},
		{"emptied", func(p string) error { return os.WriteFile(p, nil, 0o600) }, GapHeadInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyLog(t, src)
			if err := tt.tamper(filepath.Join(dir, headName)); err != nil {
				t.Fatal(err)
			}
			if rep := wantFailure(t, dir, ReasonHead); rep.Failure.File != headName {
				t.Errorf("failure %v, want the head named", rep.Failure)
			}
			l := openLog(t, dir, 0)
			appendN(t, l, 1)
			l.Close()
			rep := wantFailure(t, dir, ReasonHead)
			if len(rep.Gaps) != 1 || rep.Failure.File != logName || rep.Failure.Line != 5 || rep.LastSeq != 6 {
				t.Errorf("after a restart: %+v, want the gap record at line 5 and 6 records", rep)
			}
			if tail, _ := Tail(dir, 2); tail[0].Op != GapOp || tail[0].Details["reason"] != tt.reason {
				t.Errorf("the restart's first record is %+v, want a %s gap record", tail[0], tt.reason)
			}
		})
	}
}

// TestHeadOfAnotherLog: a head (same key) whose record is not in the log
// fails Verify, as does a log cut back to before it and then continued
// by another chain of the same key.
func TestHeadOfAnotherLog(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeLog(t, a, 5, 0)
	writeLog(t, b, 8, 0)
	dir := copyLog(t, b)
	data, _ := os.ReadFile(filepath.Join(a, headName))
	os.WriteFile(filepath.Join(dir, headName), data, 0o600)
	rep := wantFailure(t, dir, ReasonCut)
	if !strings.Contains(rep.Failure.Detail, "another MAC") {
		t.Errorf("failure %v", rep.Failure)
	}
}

// TestHeadLags: after a crash the head may name an earlier record than the
// last one on disk (the records it missed were synced, the head's write
// was not). That verifies, and the next record moves the head on.
func TestHeadLags(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 3, 0)
	early, _ := os.ReadFile(filepath.Join(dir, headName))
	l := openLog(t, dir, 0)
	appendN(t, l, 3)
	l.Close()
	os.WriteFile(filepath.Join(dir, headName), early, 0o600)
	mustVerify(t, dir)
	l = openLog(t, dir, 0)
	appendN(t, l, 1)
	l.Close()
	if rep := mustVerify(t, dir); len(rep.Gaps) != 0 || rep.LastSeq != 7 {
		t.Errorf("report %+v", rep)
	}
	if h, st, err := readHeadFile(filepath.Join(dir, headName), testKey); err != nil || st != headValid || h.Seq != 7 {
		t.Errorf("head %+v %v %v, want seq 7", h, st, err)
	}
}

// TestHeadTornSlot: a torn write damages one slot; the other one holds
// the head before it.
func TestHeadTornSlot(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 4, 0)
	p := filepath.Join(dir, headName)
	data, _ := os.ReadFile(p)
	_, slot, _, _ := readHead(bytes.NewReader(data), testKey)
	copy(data[slot*headSlot+10:], "torn")
	os.WriteFile(p, data, 0o600)
	if h, _, err := readHeadFile(p, testKey); err != nil || h.Seq != 3 {
		t.Fatalf("head %+v %v, want seq 3 from the other slot", h, err)
	}
	mustVerify(t, dir)
}

// TestHeadFollowsDeferred: the head moves to deferred records once they
// are synced, never back past another Log's synced ones, and on Close.
func TestHeadFollowsDeferred(t *testing.T) {
	dir := t.TempDir()
	headSeq := func() uint64 {
		h, _, err := readHeadFile(filepath.Join(dir, headName), testKey)
		if err != nil {
			t.Fatal(err)
		}
		return h.Seq
	}
	a, b := openLog(t, dir, 0), openLog(t, dir, 0)
	r := record(1)
	r.Deferred = true
	if err := a.Append(r); err != nil {
		t.Fatal(err)
	}
	if headSeq() != 0 {
		t.Fatal("the head moved to a record not yet synced")
	}
	tstest.WaitFor(t, 50*SyncDelay, "the head to follow a deferred record", func() bool { return headSeq() == 1 })

	if err := a.Append(r); err != nil { // seq 2, deferred
		t.Fatal(err)
	}
	appendN(t, b, 3) // seq 3-5, synced: they sync seq 2 as well
	if headSeq() != 5 {
		t.Fatalf("head at seq %d, want 5", headSeq())
	}
	a.syncDeferred() // a's round for seq 2 must not move the head back
	if headSeq() != 5 {
		t.Fatalf("a's deferred sync moved the head back to seq %d", headSeq())
	}
	if err := a.Append(r); err != nil { // seq 6, deferred
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if headSeq() != 6 {
		t.Fatalf("head at seq %d after Close, want 6", headSeq())
	}
	mustVerify(t, dir)
}

// TestHeadRemovedWhileOpen: like the log itself, a head removed or
// replaced under a running Log stops it; a restart records the loss.
func TestHeadRemovedWhileOpen(t *testing.T) {
	for _, replace := range []bool{false, true} {
		t.Run(fmt.Sprintf("replace=%v", replace), func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir, 0)
			appendN(t, l, 2)
			p := filepath.Join(dir, headName)
			data, _ := os.ReadFile(p)
			err := os.Remove(p)
			if runtime.GOOS == "windows" {
				// The Log's handle does not share delete access.
				if err == nil {
					t.Fatal("the head of an open log was removed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if replace {
				os.WriteFile(p, data, 0o600)
			}
			if err := l.Append(record(3)); err == nil || !strings.Contains(err.Error(), "head") {
				t.Fatalf("Append = %v, want the head's loss", err)
			}
			if err := l.Append(record(4)); err == nil {
				t.Fatal("the failure is not sticky")
			}
			l.Close()
			l = openLog(t, dir, 0)
			l.Close()
			if replace {
				mustVerify(t, dir) // the copy names seq 2 of 3: it lags, nothing is lost
			} else {
				wantFailure(t, dir, ReasonHead)
			}
		})
	}
}

// TestGapUnderRetention: the gap record a restart writes is reported while
// its file is kept, also once retention has removed every file before it
// (it then starts the chain, after what a checkpoint names), and ages out
// with its file like any record.
func TestGapUnderRetention(t *testing.T) {
	dir := t.TempDir()
	l := openBounded(t, dir, 1200, 4000)
	appendN(t, l, 10)
	l.Close()
	cutTo(t, dir, 6, false)
	l = openBounded(t, dir, 1200, 4000)
	gapSeq := uint64(11)
	sawGapFirst := false
	for i := range 60 {
		appendN(t, l, 1)
		rep, err := Verify(dir, "", testKey)
		gone := rep.FirstSeq > gapSeq
		switch {
		case gone && err != nil:
			t.Fatalf("after %d more records, with the gap record removed by retention: %v", i+1, err)
		case gone:
			if !sawGapFirst {
				t.Fatal("the gap record never began the chain kept")
			}
			return
		case rep.Failure == nil || rep.Failure.Reason != ReasonCut:
			t.Fatalf("after %d more records: %v (report %+v), want the gap reported", i+1, err, rep)
		}
		sawGapFirst = sawGapFirst || rep.FirstSeq == gapSeq
	}
	t.Fatal("retention never removed the gap record's file")
}

// TestHeadWaitsForTheLock: a deferred sync that finds audit.lock taken
// does not wait for it (calls checking the log would queue behind another
// Log's append); it moves the head at a later round.
func TestHeadWaitsForTheLock(t *testing.T) {
	dir := t.TempDir()
	a, b := openLog(t, dir, 0), openLog(t, dir, 0)
	r := record(1)
	r.Deferred = true
	if err := a.Append(r); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	if err := b.lock(); err != nil {
		t.Fatal(err)
	}
	// A round that waited for the lock would wait for as long as b
	// holds it: until the test times out.
	defer func(d time.Duration) { lockTimeout = d }(lockTimeout)
	lockTimeout = time.Hour
	a.syncDeferred()
	h, _, _ := readHeadFile(filepath.Join(dir, headName), testKey)
	a.mu.Lock()
	pending := a.pending
	a.mu.Unlock()
	b.unlock()
	b.mu.Unlock()
	if h.Seq != 0 || pending == nil || pending.Seq != 1 {
		t.Fatalf("with the lock taken: head %+v, pending %+v; want the head left and seq 1 pending", h, pending)
	}
	tstest.WaitFor(t, 50*SyncDelay, "the head to move once the lock is free", func() bool {
		h, _, _ := readHeadFile(filepath.Join(dir, headName), testKey)
		return h.Seq == 1
	})
}
