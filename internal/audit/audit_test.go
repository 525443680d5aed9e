package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var testKey = bytes.Repeat([]byte{0x42}, KeySize)

func openLog(t testing.TB, dir string, maxBytes int64) *Log {
	t.Helper()
	l, err := Open(Options{Dir: dir, Key: testKey, MaxBytes: maxBytes, MachineID: "m-1", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// record returns a typical record, made distinct by i.
func record(i int) Record {
	return Record{
		Transport: "mcp-stdio",
		Peer:      "pid 1234",
		Op:        "read_file",
		RequestID: fmt.Sprintf("req-%d", i),
		Workdir:   "proj",
		Paths:     []string{fmt.Sprintf("src/f%d.go", i)},
		Code:      "OK",
		Bytes:     int64(100 * i),
		Duration:  time.Duration(i) * time.Millisecond,
		Details:   map[string]any{"offset": 0, "length": i},
	}
}

// writeLog appends n records to a new log in dir and closes it.
func writeLog(t testing.TB, dir string, n int, maxBytes int64) {
	t.Helper()
	l := openLog(t, dir, maxBytes)
	for i := range n {
		if err := l.Append(record(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustVerify(t *testing.T, dir string) Report {
	t.Helper()
	rep, err := Verify(dir, "", testKey)
	if err != nil {
		t.Fatalf("Verify: %v (report %+v)", err, rep)
	}
	return rep
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 0)
	type nested struct {
		Zeta  int    `json:"zeta"`
		Alpha string `json:"alpha"`
	}
	when := time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("X", 3600))
	recs := []Record{
		{Transport: "internal", Op: "daemon_start"},
		{
			Time: when, Transport: "mcp-http", Peer: "127.0.0.1:5555", Op: "write_file",
			RequestID: "r-2", Workdir: "w", Paths: []string{"a/b.txt", "<c> & \"d\"\u2028é"},
			Code: "PATH_OUTSIDE_ALLOWED_ROOT", Bytes: math.MaxInt64, Duration: 1500 * time.Millisecond,
			Details: map[string]any{
				"z": nested{Zeta: 1, Alpha: "a"}, "a": []any{1, "two", true, nil},
				"big": uint64(math.MaxUint64), "m": map[string]int{"y": 2, "x": 1},
			},
		},
		record(3),
	}
	for _, r := range recs {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	rep := mustVerify(t, dir)
	if rep.Records != 3 || rep.FirstSeq != 1 || rep.LastSeq != 3 || !reflect.DeepEqual(rep.Files, []string{"audit.log"}) {
		t.Errorf("report = %+v", rep)
	}

	lines, err := Tail(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 {
		t.Fatalf("Tail returned %d lines, want 3", len(lines))
	}
	got := lines[1]
	if !got.Time.Equal(when) || got.Time.Location() != time.UTC {
		t.Errorf("Time = %v, want %v in UTC", got.Time, when)
	}
	if got.Seq != 2 || got.MachineID != "m-1" || got.Version != "0.1.0" || got.PrevMAC != lines[0].MAC || len(got.MAC) != 64 {
		t.Errorf("line 2 = %+v", got)
	}
	want := recs[1]
	if got.Transport != want.Transport || got.Peer != want.Peer || got.Op != want.Op || got.RequestID != want.RequestID ||
		got.Workdir != want.Workdir || !reflect.DeepEqual(got.Paths, want.Paths) || got.Code != want.Code ||
		got.Bytes != want.Bytes || got.Duration != want.Duration {
		t.Errorf("line 2 = %+v\nwant %+v", got.Record, want)
	}
	if d, _ := json.Marshal(got.Details); string(d) != `{"a":[1,"two",true,null],"big":18446744073709551615,"m":{"x":1,"y":2},"z":{"alpha":"a","zeta":1}}` {
		t.Errorf("details = %s", d)
	}
	if lines[0].Time.IsZero() || lines[0].Paths == nil || lines[0].Details == nil {
		t.Errorf("line 1 = %+v: want Time set, empty (not nil) Paths and Details", lines[0])
	}
}

// TestThirdPartyVerification checks the documented contract: parse a line,
// drop "mac", re-encode with sorted keys and Go's escaping, and the HMAC of
// that is "mac".
func TestThirdPartyVerification(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 0)
	for _, d := range []map[string]any{nil, {"html": "<&>", "n": 1, "nested": map[string]any{"b": 1, "a": 2}}} {
		if err := l.Append(Record{Op: "x", Details: d, Paths: []string{"\u00e9\u2029"}}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n") {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatal(err)
		}
		var mac string
		json.Unmarshal(obj["mac"], &mac)
		delete(obj, "mac")
		var generic any
		b, _ := json.Marshal(obj)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&generic); err != nil {
			t.Fatal(err)
		}
		canonical, _ := json.Marshal(generic)
		h := hmac.New(sha256.New, testKey)
		h.Write(canonical)
		if got := hex.EncodeToString(h.Sum(nil)); got != mac {
			t.Errorf("HMAC of re-canonicalised %s = %s, line says %s", canonical, got, mac)
		}
		if !strings.HasPrefix(line, string(canonical[:len(canonical)-1])+`,"mac":"`) {
			t.Errorf("line %q does not start with its canonical form %s", line, canonical)
		}
	}
}

func TestAppendRefuses(t *testing.T) {
	tests := []struct {
		name string
		r    Record
		want string
	}{
		{"no op", Record{Transport: "cli"}, "no Op"},
		{"channel", Record{Op: "x", Details: map[string]any{"c": make(chan int)}}, "not JSON-marshalable"},
		{"func", Record{Op: "x", Details: map[string]any{"f": func() {}}}, "not JSON-marshalable"},
		{"NaN", Record{Op: "x", Details: map[string]any{"n": math.NaN()}}, "not JSON-marshalable"},
		{"too big", Record{Op: "x", Details: map[string]any{"s": strings.Repeat("a", maxLine)}}, "over the"},
	}
	dir := t.TempDir()
	l := openLog(t, dir, 0)
	for _, tt := range tests {
		err := l.Append(tt.r)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Append = %v, want error containing %q", tt.name, err, tt.want)
		}
	}
	// None of that is a write failure: the log is still usable.
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(record(1)); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, dir); rep.Records != 1 {
		t.Errorf("records = %d, want 1", rep.Records)
	}
}

// lineSpans returns the byte range [start, end) of each line in data,
// newline included.
func lineSpans(data []byte) [][2]int {
	var spans [][2]int
	for start := 0; start < len(data); {
		end := bytes.IndexByte(data[start:], '\n') + start + 1
		spans = append(spans, [2]int{start, end})
		start = end
	}
	return spans
}

// TestByteFlip flips each byte of a small log in turn, in two ways, and
// checks that Verify fails on the line holding that byte.
func TestByteFlip(t *testing.T) {
	src := t.TempDir()
	writeLog(t, src, 5, 0)
	orig, err := os.ReadFile(filepath.Join(src, logName))
	if err != nil {
		t.Fatal(err)
	}
	spans := lineSpans(orig)
	dir := t.TempDir()
	path := filepath.Join(dir, logName)
	data := make([]byte, len(orig))
	for i, span := range spans {
		for off := span[0]; off < span[1]; off++ {
			for _, mask := range []byte{0x01, 0x20} {
				copy(data, orig)
				data[off] ^= mask
				if err := os.WriteFile(path, data, 0o600); err != nil {
					t.Fatal(err)
				}
				rep, err := Verify(dir, "", testKey)
				if !errors.Is(err, ErrCorrupt) || rep.Failure == nil {
					t.Fatalf("offset %d ^ %#x (%q): Verify = %v, want ErrCorrupt", off, mask, orig[off], err)
				}
				if f := rep.Failure; f.File != logName || f.Line != i+1 {
					t.Fatalf("offset %d ^ %#x (%q): failure at %s line %d, want line %d (%v)", off, mask, orig[off], f.File, f.Line, i+1, f)
				}
			}
		}
	}
}

// TestTamper edits a rotated log in whole-line ways and checks where and
// why Verify fails.
func TestTamper(t *testing.T) {
	src := t.TempDir()
	writeLog(t, src, 30, 1500)
	names, err := logFiles(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 4 {
		t.Fatalf("want at least 3 rotated files, got %v", names)
	}
	mid, last := names[1], names[len(names)-1]

	// edit rewrites file name in dir through fn, which gets its lines.
	edit := func(dir, name string, fn func(lines []string) []string) {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		lines = fn(lines[:len(lines)-1])
		if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		tamper func(dir string)
		key    []byte
		file   string
		line   int
		reason Reason
	}{
		{"delete line", func(dir string) {
			edit(dir, mid, func(l []string) []string { return append(l[:1], l[2:]...) })
		}, testKey, mid, 2, ReasonSeqGap},
		{"reorder lines", func(dir string) {
			edit(dir, mid, func(l []string) []string { l[0], l[1] = l[1], l[0]; return l })
		}, testKey, mid, 1, ReasonSeqGap},
		{"duplicate line", func(dir string) {
			edit(dir, mid, func(l []string) []string { return append(l[:2], l[1:]...) })
		}, testKey, mid, 3, ReasonSeqGap},
		{"truncate mid-line", func(dir string) {
			edit(dir, last, func(l []string) []string { l[len(l)-1] = l[len(l)-1][:40]; return l })
		}, testKey, last, 0, ReasonTruncated},
		{"truncate rotated file at line boundary", func(dir string) {
			edit(dir, mid, func(l []string) []string { return l[:len(l)-1] })
		}, testKey, names[2], 1, ReasonSeqGap},
		{"empty a rotated file", func(dir string) {
			edit(dir, mid, func([]string) []string { return nil })
		}, testKey, names[2], 1, ReasonSeqGap},
		{"delete rotated file", func(dir string) {
			if err := os.Remove(filepath.Join(dir, mid)); err != nil {
				t.Fatal(err)
			}
		}, testKey, names[2], 1, ReasonSeqGap},
		{"delete the oldest file", func(dir string) {
			if err := os.Remove(filepath.Join(dir, names[0])); err != nil {
				t.Fatal(err)
			}
		}, testKey, names[1], 1, ReasonMissing},
		{"swap rotated file names", func(dir string) {
			a, b := filepath.Join(dir, names[1]), filepath.Join(dir, names[2])
			os.Rename(a, a+".tmp")
			os.Rename(b, a)
			os.Rename(a+".tmp", b)
		}, testKey, names[1], 1, ReasonSeqGap},
		{"append the next record of another chain", func(dir string) {
			// Same key and seq 31, but it follows another seq 30.
			other := t.TempDir()
			writeLog(t, other, 31, 0)
			data, _ := os.ReadFile(filepath.Join(other, logName))
			edit(dir, last, func(l []string) []string { return append(l, lineSplit(data)[30]) })
		}, testKey, last, -1, ReasonChainBreak},
		{"wrong key", func(string) {}, bytes.Repeat([]byte{7}, KeySize), names[0], 1, ReasonBadMAC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, n := range append(names, headName) { // the head belongs to the log
				data, err := os.ReadFile(filepath.Join(src, n))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, n), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			mustVerify(t, dir)
			tt.tamper(dir)
			rep, err := Verify(dir, "", tt.key)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Verify = %v, want ErrCorrupt", err)
			}
			f := rep.Failure
			wantLine := tt.line
			if wantLine == 0 || wantLine == -1 { // the last line of the file
				data, _ := os.ReadFile(filepath.Join(dir, tt.file))
				wantLine = len(lineSplit(data))
			}
			if f.File != tt.file || f.Line != wantLine || f.Reason != tt.reason {
				t.Errorf("failure = %s line %d %q, want %s line %d %q (%v)", f.File, f.Line, f.Reason, tt.file, wantLine, tt.reason, f)
			}
		})
	}
}

// lineSplit splits data into lines, keeping newlines; a last line without
// one counts.
func lineSplit(data []byte) []string {
	s := strings.SplitAfter(string(data), "\n")
	if s[len(s)-1] == "" {
		s = s[:len(s)-1]
	}
	return s
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	const maxBytes = 2000
	l := openLog(t, dir, maxBytes)
	for i := range 40 {
		if err := l.Append(record(i)); err != nil {
			t.Fatal(err)
		}
	}
	rep := mustVerify(t, dir)
	if len(rep.Files) < 4 || rep.Records != 40 || rep.FirstSeq != 1 || rep.LastSeq != 40 {
		t.Fatalf("report = %+v, want 40 records in ≥ 4 files", rep)
	}
	if rep.Files[len(rep.Files)-1] != logName {
		t.Errorf("files = %v, want audit.log last", rep.Files)
	}
	for _, name := range rep.Files {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > maxBytes || fi.Size() == 0 {
			t.Errorf("%s is %d bytes, want 1..%d", name, fi.Size(), maxBytes)
		}
	}

	// Reopen and continue: the chain picks up where it left off.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, maxBytes)
	if err := l.Append(record(41)); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, dir); rep.LastSeq != 41 {
		t.Errorf("after reopen: last seq %d, want 41", rep.LastSeq)
	}
	tail, err := Tail(dir, 25)
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) != 25 || tail[0].Seq != 17 || tail[24].Seq != 41 {
		t.Errorf("Tail(25) returned %d lines, seq %d..%d; want 25, 17..41", len(tail), tail[0].Seq, tail[len(tail)-1].Seq)
	}
	for i := 1; i < len(tail); i++ {
		if tail[i].Seq != tail[i-1].Seq+1 || tail[i].PrevMAC != tail[i-1].MAC {
			t.Errorf("Tail: line %d does not follow line %d", i, i-1)
		}
	}
}

// A crash between renaming audit.log away and creating the new one leaves
// no audit.log; Open resumes from the newest rotated file.
func TestOpenResumesFromRotated(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 3, 0)
	if err := os.Rename(filepath.Join(dir, logName), filepath.Join(dir, logName+".20260101-000000")); err != nil {
		t.Fatal(err)
	}
	// A newer but empty rotated file is skipped.
	if err := os.WriteFile(filepath.Join(dir, logName+".20260101-000000-1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l := openLog(t, dir, 0)
	if err := l.Append(record(4)); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, dir); rep.Records != 4 || len(rep.Files) != 3 {
		t.Errorf("report = %+v, want 4 records in 3 files", rep)
	}
}

func TestRotatedNames(t *testing.T) {
	dir := t.TempDir()
	l := &Log{dir: dir}
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	tests := []struct {
		newest rotated
		exists []string
		want   string
	}{
		{rotated{}, nil, "audit.log.20260506-070809"},
		{rotated{stamp: "20260506-070808"}, nil, "audit.log.20260506-070809"},
		{rotated{stamp: "20260506-070809"}, nil, "audit.log.20260506-070809-1"},
		{rotated{stamp: "20260506-070809", n: 9}, nil, "audit.log.20260506-070809-10"},
		{rotated{stamp: "20270101-000000", n: 2}, nil, "audit.log.20270101-000000-3"}, // clock went back
		{rotated{}, []string{"audit.log.20260506-070809", "audit.log.20260506-070809-1"}, "audit.log.20260506-070809-2"},
	}
	for _, tt := range tests {
		for _, name := range tt.exists {
			os.WriteFile(filepath.Join(dir, name), nil, 0o600)
		}
		l.newest = tt.newest
		if got := l.nextRotated(now).String(); got != tt.want {
			t.Errorf("newest %v, existing %v: got %s, want %s", tt.newest, tt.exists, got, tt.want)
		}
		for _, name := range tt.exists {
			os.Remove(filepath.Join(dir, name))
		}
	}

	// Ordering is numeric in -N, and other names are ignored.
	for _, name := range []string{"audit.log.20260506-070809-10", "audit.log.20260506-070809-2", "audit.log.20260506-070809",
		"audit.log.20250101-000000", "audit.log.bak", "audit.log.20260506-070809-01", "audit.log.2026050-0708090", "audit.lock"} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o600)
	}
	got, err := logFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"audit.log.20250101-000000", "audit.log.20260506-070809", "audit.log.20260506-070809-2", "audit.log.20260506-070809-10"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("logFiles = %v, want %v", got, want)
	}
}

func TestOpenCorruptTail(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(data []byte) []byte
		key    []byte
		reason Reason
	}{
		{"truncated", func(d []byte) []byte { return d[:len(d)-10] }, testKey, ReasonTruncated},
		{"only a partial line", func(d []byte) []byte { return d[:10] }, testKey, ReasonTruncated},
		{"garbage", func(d []byte) []byte { return append(d, "not json\n"...) }, testKey, ReasonUnparsable},
		{"altered", func(d []byte) []byte { return bytes.Replace(d, []byte(`"bytes":300`), []byte(`"bytes":301`), 1) }, testKey, ReasonBadMAC},
		{"other key", func(d []byte) []byte { return d }, bytes.Repeat([]byte{9}, KeySize), ReasonBadMAC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLog(t, dir, 3, 0)
			p := filepath.Join(dir, logName)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, tt.tamper(data), 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := Open(Options{Dir: dir, Key: tt.key})
			if err == nil {
				l.Close()
				t.Fatal("Open succeeded on a corrupt log")
			}
			var f *Failure
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &f) || f.Reason != tt.reason || f.File != logName {
				t.Errorf("Open = %v, want a %q *Failure in audit.log", err, tt.reason)
			}
			if !strings.Contains(err.Error(), "hostlink audit verify") {
				t.Errorf("Open = %v, want it to point at hostlink audit verify", err)
			}
		})
	}
}

func TestOpenFails(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) Options
	}{
		{"dir under a file", func(t *testing.T) Options {
			f := filepath.Join(t.TempDir(), "file")
			os.WriteFile(f, nil, 0o600)
			return Options{Dir: filepath.Join(f, "audit"), Key: testKey}
		}},
		{"audit.log is a directory", func(t *testing.T) Options {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, logName), 0o700)
			return Options{Dir: dir, Key: testKey}
		}},
		{"short key", func(t *testing.T) Options {
			return Options{Dir: t.TempDir(), Key: testKey[:16]}
		}},
		{"no dir", func(t *testing.T) Options {
			return Options{Key: testKey}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if l, err := Open(tt.setup(t)); err == nil {
				l.Close()
				t.Error("Open succeeded")
			}
		})
	}
}

func TestClose(t *testing.T) {
	l := openLog(t, t.TempDir(), 0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{"Check": l.Check(), "Append": l.Append(record(1)), "Close": l.Close()} {
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func TestConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 8<<10) // rotate along the way too
	const goroutines, each = 16, 25
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r := record(i)
				r.Peer = fmt.Sprintf("goroutine %d", g)
				if err := l.Append(r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if rep := mustVerify(t, dir); rep.Records != goroutines*each {
		t.Errorf("records = %d, want %d", rep.Records, goroutines*each)
	}
}

func TestVerifyEmptyDir(t *testing.T) {
	if _, err := Verify(t.TempDir(), "", testKey); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Verify(empty dir) = %v, want ErrNotExist", err)
	}
}

func TestTailLines(t *testing.T) {
	long := strings.Repeat("x", tailChunk+10)
	tests := []struct {
		data           string
		n              int
		want           []string
		wantIncomplete bool
	}{
		{"", 3, nil, false},
		{"a\n", 3, []string{"a"}, false},
		{"a\nb\nc\n", 2, []string{"b", "c"}, false},
		{"a\nb\nc", 2, []string{"a", "b"}, true},
		{"abc", 1, nil, true},
		{"a\n" + long + "\nb\n", 2, []string{long, "b"}, false},
		{long + "\n" + long + "\n", 1, []string{long}, false},
		{long + "\n" + long + "\n", 5, []string{long, long}, false},
	}
	for _, tt := range tests {
		got, incomplete, err := tailLines(strings.NewReader(tt.data), int64(len(tt.data)), tt.n)
		if err != nil {
			t.Fatal(err)
		}
		var gotS []string
		for _, l := range got {
			gotS = append(gotS, string(l))
		}
		if !reflect.DeepEqual(gotS, tt.want) || incomplete != tt.wantIncomplete {
			t.Errorf("tailLines(%.20q, %d) = %.40q, %v; want %.40q, %v", tt.data, tt.n, gotS, incomplete, tt.want, tt.wantIncomplete)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	l := openLog(b, b.TempDir(), 0)
	r := record(1)
	for b.Loop() {
		if err := l.Append(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckAppendDeferredParallel is what concurrent read-only calls
// cost the log: a Check and a deferred Append each, with the deferred
// syncs running meanwhile.
func BenchmarkCheckAppendDeferredParallel(b *testing.B) {
	l := openLog(b, b.TempDir(), 0)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if err := l.Check(); err != nil {
				b.Fatal(err)
			}
			r := record(i)
			r.Deferred = true
			if err := l.Append(r); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
