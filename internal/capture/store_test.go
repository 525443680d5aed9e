package capture

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// fakeClock is a settable clock for retention tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openStore opens a store in a fresh directory unless o.Dir is set, and
// closes it when the test ends.
func openStore(t testing.TB, o Options) *Store {
	t.Helper()
	if o.Dir == "" {
		o.Dir = filepath.Join(t.TempDir(), "captures")
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func create(t testing.TB, s *Store, meta Meta) *Capture {
	t.Helper()
	if meta.Op == "" {
		meta.Op = "run_command"
	}
	c, prev, err := s.Create(meta)
	if err != nil {
		t.Fatal(err)
	}
	if prev != nil {
		t.Fatalf("Create returned an existing capture %s", prev.ID)
	}
	return c
}

func write(t testing.TB, c *Capture, stream string, data []byte) {
	t.Helper()
	w := c.Stdout()
	if stream == Stderr {
		w = c.Stderr()
	}
	if n, err := w.Write(data); err != nil || n != len(data) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(data))
	}
}

func finish(t testing.TB, c *Capture, r Receipt) *Info {
	t.Helper()
	info, err := c.Finish(r)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func exited(code int) Receipt { return Receipt{Status: StatusExited, ExitCode: code} }

// readAll reads a stream in chunks of size max, checking every chunk's
// hash and offsets, and returns the bytes and the last chunk.
func readAll(t testing.TB, s *Store, id, stream string, max int) ([]byte, Chunk) {
	t.Helper()
	var (
		out    []byte
		offset int64
	)
	for {
		c, err := s.Read(id, stream, offset, max)
		if err != nil {
			t.Fatalf("Read(%s, %d, %d): %v", stream, offset, max, err)
		}
		if c.Offset != offset || c.Next != offset+int64(len(c.Data)) || len(c.Data) > max {
			t.Fatalf("chunk at %d: Offset %d Next %d len %d", offset, c.Offset, c.Next, len(c.Data))
		}
		if c.SHA256 != hexSum(c.Data) {
			t.Fatalf("chunk at %d: SHA256 %s, want %s", offset, c.SHA256, hexSum(c.Data))
		}
		out = append(out, c.Data...)
		offset = c.Next
		if len(c.Data) == 0 || c.Next == c.StreamLength {
			return out, c
		}
	}
}

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func wantCode(t testing.TB, err error, code errcode.Code) {
	t.Helper()
	if got := errcode.CodeOf(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

func TestRoundTrip(t *testing.T) {
	clock := newFakeClock()
	s := openStore(t, Options{Now: clock.Now})
	meta := Meta{Op: "start_command", Argv: []string{"echo", "hi there"}, Workdir: "workspace", Cwd: "sub/dir",
		EnvKeys: []string{"FOO", "BAR"}, IdempotencyKey: "k1"}
	c := create(t, s, meta)
	if !validID(c.ID()) {
		t.Fatalf("id %q has the wrong shape", c.ID())
	}
	info, err := s.Get(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != StatusPending || !info.ExpiresAt.Equal(clock.Now().Add(DefaultRetention)) {
		t.Errorf("new capture: status %s, expires %v", info.Status, info.ExpiresAt)
	}
	start := clock.Now().Add(time.Second)
	if err := c.Started(4242, start); err != nil {
		t.Fatal(err)
	}
	stdout := randomBytes(3<<20+17, 1) // 3 MiB and a bit: many chunks, a short last one
	for rest := stdout; len(rest) > 0; {
		n := min(len(rest), 1000+rand.IntN(100000))
		write(t, c, Stdout, rest[:n])
		rest = rest[n:]
	}
	write(t, c, Stderr, []byte("warning: ünïcode\n"))

	info, err = s.Get(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != StatusRunning || info.Pid != 4242 || !info.StartedAt.Equal(start) ||
		info.Stdout.TotalBytes != int64(len(stdout)) || info.Stdout.Complete || info.Stdout.SHA256 != "" {
		t.Errorf("running capture: %+v", info)
	}

	end := start.Add(time.Minute)
	info = finish(t, c, Receipt{Status: StatusExited, ExitCode: 3, EndedAt: end})
	if info.Status != StatusExited || info.ExitCode == nil || *info.ExitCode != 3 || !info.EndedAt.Equal(end) || info.Signal != "" {
		t.Errorf("finished capture: %+v", info)
	}
	want := StreamInfo{StoredBytes: int64(len(stdout)), TotalBytes: int64(len(stdout)), SHA256: hexSum(stdout), Complete: true}
	if info.Stdout != want {
		t.Errorf("stdout info = %+v, want %+v", info.Stdout, want)
	}
	if info.Meta.Op != meta.Op || info.Meta.Cwd != meta.Cwd || len(info.Meta.Argv) != 2 || info.Meta.Argv[1] != "hi there" ||
		len(info.Meta.EnvKeys) != 2 || info.Meta.IdempotencyKey != "k1" {
		t.Errorf("meta = %+v", info.Meta)
	}

	for _, max := range []int{1 << 10, 4093, MaxChunk} {
		got, last := readAll(t, s, c.ID(), Stdout, max)
		if !bytes.Equal(got, stdout) {
			t.Fatalf("max %d: read back %d bytes that differ from the %d written", max, len(got), len(stdout))
		}
		if hexSum(got) != last.StreamSHA256 || !last.Complete {
			t.Errorf("max %d: last chunk %+v", max, last)
		}
	}
	got, _ := readAll(t, s, c.ID(), Stderr, MaxChunk)
	if string(got) != "warning: ünïcode\n" {
		t.Errorf("stderr = %q", got)
	}

	// Everything survives a reopen.
	dir := s.dir
	s.Close()
	s = openStore(t, Options{Dir: dir, Now: clock.Now})
	info2, err := s.Get(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info2.Status != StatusExited || info2.Stdout != want {
		t.Errorf("after reopen: %+v", info2)
	}
	if got, _ := readAll(t, s, c.ID(), Stdout, MaxChunk); !bytes.Equal(got, stdout) {
		t.Error("stdout differs after reopen")
	}
}

func TestReadWhileRunning(t *testing.T) {
	s := openStore(t, Options{})
	c := create(t, s, Meta{})
	if err := c.Started(1, time.Now()); err != nil {
		t.Fatal(err)
	}
	// Smaller than the buffer: a read must still see it.
	write(t, c, Stdout, []byte("partial "))
	ch, err := s.Read(c.ID(), Stdout, 0, MaxChunk)
	if err != nil {
		t.Fatal(err)
	}
	if string(ch.Data) != "partial " || ch.Complete || ch.StreamSHA256 != "" || ch.StreamLength != 8 {
		t.Errorf("chunk while running = %+v", ch)
	}
	write(t, c, Stdout, []byte("more"))
	ch, err = s.Read(c.ID(), Stdout, ch.Next, MaxChunk)
	if err != nil {
		t.Fatal(err)
	}
	if string(ch.Data) != "more" || ch.Complete {
		t.Errorf("second chunk = %+v", ch)
	}
	finish(t, c, exited(0))
	ch, err = s.Read(c.ID(), Stdout, 0, MaxChunk)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Complete || ch.StreamSHA256 != hexSum([]byte("partial more")) {
		t.Errorf("chunk after finish = %+v", ch)
	}
}

func TestReadErrors(t *testing.T) {
	s := openStore(t, Options{})
	c := create(t, s, Meta{})
	data := randomBytes(2*MaxChunk+5, 2)
	write(t, c, Stdout, data)
	finish(t, c, exited(0))
	id := c.ID()
	tests := []struct {
		name    string
		id      string
		stream  string
		offset  int64
		max     int
		code    errcode.Code // "" for success
		wantLen int
	}{
		{"max at limit", id, Stdout, 0, MaxChunk, "", MaxChunk},
		{"max past limit", id, Stdout, 0, MaxChunk + 1, errcode.InvalidArgument, 0},
		{"max zero", id, Stdout, 0, 0, errcode.InvalidArgument, 0},
		{"negative offset", id, Stdout, -1, 10, errcode.InvalidArgument, 0},
		{"last bytes", id, Stdout, int64(len(data) - 5), MaxChunk, "", 5},
		{"offset at end", id, Stdout, int64(len(data)), MaxChunk, "", 0},
		{"offset past end", id, Stdout, int64(len(data)) + 1, MaxChunk, errcode.InvalidArgument, 0},
		{"empty stream", id, Stderr, 0, MaxChunk, "", 0},
		{"bad stream", id, "stdin", 0, 10, errcode.InvalidArgument, 0},
		{"unknown id", newID(), Stdout, 0, 10, CodeNotFound, 0},
		{"malformed id", "../captures.db", Stdout, 0, 10, CodeNotFound, 0},
		{"upper-case id", "CAP_" + id[4:], Stdout, 0, 10, CodeNotFound, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := s.Read(tt.id, tt.stream, tt.offset, tt.max)
			if tt.code != "" {
				wantCode(t, err, tt.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.Data) != tt.wantLen || !bytes.Equal(ch.Data, data[tt.offset:tt.offset+int64(tt.wantLen)]) && tt.stream == Stdout {
				t.Errorf("got %d bytes, want %d", len(ch.Data), tt.wantLen)
			}
		})
	}
	_, err := s.Get(newID())
	wantCode(t, err, CodeNotFound)
}

func TestReadText(t *testing.T) {
	// "a" (1 byte) "é" (2) "€" (3) "𝄞" (4) "z" (1): boundaries at 0 1 3 6 10 11.
	const text = "aé€𝄞z"
	s := openStore(t, Options{})
	c := create(t, s, Meta{})
	write(t, c, Stdout, []byte(text))
	write(t, c, Stderr, []byte("ok\xffbad"))
	finish(t, c, exited(0))

	tests := []struct {
		offset int64
		max    int
		want   string // "" with code set: an error
		code   errcode.Code
	}{
		{0, 1, "a", ""},
		{0, 2, "a", ""}, // é would be split
		{0, 3, "aé", ""},
		{0, 5, "aé", ""}, // € split after 2 of its 3 bytes
		{0, 6, "aé€", ""},
		{3, 3, "€", ""},
		{3, 4, "€", ""},
		{6, 3, "", errcode.InvalidArgument}, // 𝄞 needs 4: max too small, not an endless empty chunk
		{6, 4, "𝄞", ""},
		{6, 5, "𝄞z", ""},
		{0, MaxChunk, text, ""},
		{1, 1, "", errcode.InvalidArgument},  // é needs 2
		{2, 10, "", errcode.InvalidArgument}, // starts inside é
		{11, 10, "", ""},                     // at the end: empty
	}
	for _, tt := range tests {
		ch, err := s.ReadText(c.ID(), Stdout, tt.offset, tt.max)
		if tt.code != "" {
			wantCode(t, err, tt.code)
			continue
		}
		if err != nil {
			t.Fatalf("ReadText(%d, %d): %v", tt.offset, tt.max, err)
		}
		if string(ch.Data) != tt.want || ch.Next != tt.offset+int64(len(tt.want)) || ch.SHA256 != hexSum([]byte(tt.want)) {
			t.Errorf("ReadText(%d, %d) = %q next %d, want %q next %d", tt.offset, tt.max, ch.Data, ch.Next, tt.want, tt.offset+int64(len(tt.want)))
		}
	}

	// Invalid bytes: the valid prefix first, then an error naming the offset.
	ch, err := s.ReadText(c.ID(), Stderr, 0, MaxChunk)
	if err != nil || string(ch.Data) != "ok" || ch.Next != 2 {
		t.Fatalf("ReadText(stderr) = %q %d, %v", ch.Data, ch.Next, err)
	}
	_, err = s.ReadText(c.ID(), Stderr, 2, MaxChunk)
	wantCode(t, err, errcode.InvalidArgument)
	if e := errcode.As(err); e.Details["offset"] != int64(2) {
		t.Errorf("error details = %v, want offset 2", e.Details)
	}
}

func TestReadTextWhileRunning(t *testing.T) {
	s := openStore(t, Options{})
	c := create(t, s, Meta{})
	euro := []byte("€")
	write(t, c, Stdout, append([]byte("x"), euro[:2]...)) // "x" and the start of €
	ch, err := s.ReadText(c.ID(), Stdout, 0, MaxChunk)
	if err != nil || string(ch.Data) != "x" || ch.Next != 1 {
		t.Fatalf("ReadText = %q %d, %v", ch.Data, ch.Next, err)
	}
	// Nothing more is stored yet: an empty chunk, not an error.
	ch, err = s.ReadText(c.ID(), Stdout, 1, MaxChunk)
	if err != nil || len(ch.Data) != 0 || ch.Next != 1 || ch.Complete {
		t.Fatalf("ReadText at the unfinished character = %q %d %v, %v", ch.Data, ch.Next, ch.Complete, err)
	}
	write(t, c, Stdout, euro[2:])
	ch, err = s.ReadText(c.ID(), Stdout, 1, MaxChunk)
	if err != nil || string(ch.Data) != "€" || ch.Next != 4 {
		t.Fatalf("ReadText after the rest = %q %d, %v", ch.Data, ch.Next, err)
	}
	c.Finish(exited(0))
}

func TestCap(t *testing.T) {
	const limit = 100 << 10
	tests := []struct {
		name      string
		writes    []int
		truncated bool
	}{
		{"under", []int{limit - 1}, false},
		{"at", []int{limit}, false},
		{"at in pieces", []int{limit / 2, limit / 2, 0}, false},
		{"one past", []int{limit + 1}, true},
		{"past in pieces", []int{limit - 10, 20, 5000, 1 << 20}, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, Options{MaxStreamBytes: limit})
			c := create(t, s, Meta{})
			var all []byte
			for j, n := range tt.writes {
				b := randomBytes(n, uint64(i*100+j))
				write(t, c, Stdout, b)
				all = append(all, b...)
			}
			stored := all[:min(len(all), limit)]
			info := finish(t, c, exited(0))
			want := StreamInfo{StoredBytes: int64(len(stored)), TotalBytes: int64(len(all)), SHA256: hexSum(stored),
				Truncated: tt.truncated, Complete: true}
			if info.Stdout != want || info.Status != StatusExited {
				t.Errorf("info = %s %+v, want %+v", info.Status, info.Stdout, want)
			}
			got, last := readAll(t, s, c.ID(), Stdout, MaxChunk)
			if !bytes.Equal(got, stored) || last.Truncated != tt.truncated || last.StreamSHA256 != hexSum(stored) {
				t.Errorf("read back %d bytes, truncated %v", len(got), last.Truncated)
			}
		})
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct {
	w io.Writer
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return f.w.Write(p)
	}
	n, _ := f.w.Write(p[:f.n])
	f.n = 0
	return n, errors.New("no space left on device (simulated)")
}

func TestWriteFailureMidRun(t *testing.T) {
	s := openStore(t, Options{})
	c := create(t, s, Meta{})
	if err := c.Started(7, time.Now()); err != nil {
		t.Fatal(err)
	}
	const good = 200 << 10
	c.stdout.file.w = &failAfter{w: c.stdout.f, n: good}
	data := randomBytes(1<<20, 3)
	// The writer never sees the failure: the command must not be pushed
	// into a different outcome.
	for i := 0; i < len(data); i += 10000 {
		write(t, c, Stdout, data[i:min(i+10000, len(data))])
	}
	write(t, c, Stderr, []byte("stderr is fine"))

	info, err := s.Get(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != StatusIncomplete || info.Reason == "" {
		t.Errorf("during the run: status %s reason %q, want incomplete at once", info.Status, info.Reason)
	}

	info = finish(t, c, exited(0))
	if info.Status != StatusIncomplete || info.ExitCode != nil || info.Signal != "" {
		t.Errorf("Finish(exited) after a failure: status %s exit %v; must stay incomplete without an exit code", info.Status, info.ExitCode)
	}
	if !info.Stdout.Failed || info.Stdout.StoredBytes != good || info.Stdout.TotalBytes != int64(len(data)) ||
		info.Stdout.SHA256 != hexSum(data[:good]) {
		t.Errorf("stdout = %+v, want %d stored of %d, failed", info.Stdout, good, len(data))
	}
	if info.Stderr.Failed || info.Stderr.StoredBytes != 14 {
		t.Errorf("stderr = %+v", info.Stderr)
	}
	got, _ := readAll(t, s, c.ID(), Stdout, MaxChunk)
	if !bytes.Equal(got, data[:good]) {
		t.Errorf("read back %d bytes, want the %d stored before the failure", len(got), good)
	}
}

func TestCreateFailsBeforeDispatch(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, s *Store)
	}{
		{"capture directory cannot be made", func(t *testing.T, s *Store) {
			// The stream directories go under a regular file now.
			file := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			s.dir = file
		}},
		{"store directory replaced by a file", func(t *testing.T, s *Store) {
			if runtime.GOOS == "windows" {
				t.Skip("an open database cannot be removed on Windows")
			}
			if err := os.RemoveAll(s.dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"database closed", func(t *testing.T, s *Store) { s.db.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, Options{})
			tt.break_(t, s)
			c, prev, err := s.Create(Meta{Op: "run_command", IdempotencyKey: "k"})
			if c != nil || prev != nil {
				t.Fatalf("Create on a broken store returned a capture")
			}
			wantCode(t, err, CodeUnavailable)
			if e := errcode.As(err); !bytes.Contains([]byte(e.Message), []byte("not started")) {
				t.Errorf("message %q does not say the command was not started", e.Message)
			}
			if tt.name == "database closed" {
				return
			}
			// Nothing is left behind; the key is free for a retry.
			if infos, err := s.List(Filter{}); err != nil || len(infos) != 0 {
				t.Errorf("List after failed Create = %d, %v", len(infos), err)
			}
			if _, ok, err := s.FindByIdempotencyKey("k"); ok || err != nil {
				t.Errorf("key still taken: %v %v", ok, err)
			}
		})
	}
}

func TestIdempotency(t *testing.T) {
	s := openStore(t, Options{})
	first := create(t, s, Meta{IdempotencyKey: "same"})
	c, prev, err := s.Create(Meta{Op: "run_command", IdempotencyKey: "same"})
	if err != nil || c != nil || prev == nil || prev.ID != first.ID() {
		t.Fatalf("second Create = %v %v %v, want the first capture", c, prev, err)
	}
	if _, ok, _ := s.FindByIdempotencyKey("other"); ok {
		t.Error("unknown key found")
	}
	info, ok, err := s.FindByIdempotencyKey("same")
	if err != nil || !ok || info.ID != first.ID() {
		t.Errorf("FindByIdempotencyKey = %v %v %v", info, ok, err)
	}
	finish(t, first, exited(0))

	// Racing Creates with one key: exactly one wins, the others get it.
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		seen    = map[string]int{}
	)
	for range n {
		wg.Go(func() {
			c, prev, err := s.Create(Meta{Op: "run_command", IdempotencyKey: "race"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case c != nil:
				winners = append(winners, c.ID())
				seen[c.ID()]++
			default:
				seen[prev.ID]++
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 || len(seen) != 1 {
		t.Fatalf("winners %v, ids seen %v; want one capture for the key", winners, seen)
	}

	// A discarded capture (command never started) frees its key.
	c, _, err = s.Create(Meta{Op: "run_command", IdempotencyKey: "discard"})
	if err != nil || c == nil {
		t.Fatal(err)
	}
	if err := c.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(c.ID()); errcode.CodeOf(err) != CodeNotFound {
		t.Errorf("Get after Discard: %v", err)
	}
	if _, err := os.Stat(s.captureDir(c.ID())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("files left after Discard: %v", err)
	}
	create(t, s, Meta{IdempotencyKey: "discard"})
}

func TestCrashRecovery(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "captures")
	s := openStore(t, Options{Dir: dir})
	running := create(t, s, Meta{})
	if err := running.Started(99, time.Now()); err != nil {
		t.Fatal(err)
	}
	write(t, running, Stdout, bytes.Repeat([]byte("x"), 100<<10)) // past the buffer: on disk
	pending := create(t, s, Meta{})
	done := create(t, s, Meta{})
	finish(t, done, exited(0))
	// Simulate a crash: the database goes away without Finish or Close.
	running.stdout.f.Close()
	running.stderr.f.Close()
	pending.stdout.f.Close()
	pending.stderr.f.Close()
	s.db.Close()

	s = openStore(t, Options{Dir: dir})
	for _, tt := range []struct {
		id     string
		status Status
		stored int64
	}{
		{running.ID(), StatusIncomplete, 100 << 10},
		{pending.ID(), StatusIncomplete, 0},
		{done.ID(), StatusExited, 0},
	} {
		info, err := s.Get(tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != tt.status || info.Stdout.StoredBytes != tt.stored || !info.Stdout.Complete {
			t.Errorf("after restart: %s %+v, want %s with %d bytes", info.Status, info.Stdout, tt.status, tt.stored)
		}
		if tt.status == StatusIncomplete && (info.Reason == "" || info.ExitCode != nil) {
			t.Errorf("incomplete capture: reason %q exit %v", info.Reason, info.ExitCode)
		}
	}
	got, _ := readAll(t, s, running.ID(), Stdout, MaxChunk)
	if len(got) != 100<<10 {
		t.Errorf("read %d bytes of the interrupted capture", len(got))
	}
}

func TestListAndStatuses(t *testing.T) {
	clock := newFakeClock()
	s := openStore(t, Options{Now: clock.Now})
	receipts := []Receipt{
		exited(0),
		{Status: StatusKilled, Signal: "SIGKILL"},
		{Status: StatusTimedOut, Signal: "SIGTERM"},
		{Status: StatusIncomplete, Reason: "lost track"},
	}
	var ids []string
	for _, r := range receipts {
		c := create(t, s, Meta{})
		clock.Advance(time.Second)
		info := finish(t, c, r)
		if info.Status != r.Status || (r.Status != StatusIncomplete && info.Signal != r.Signal) {
			t.Errorf("Finish(%+v) = %s %q", r, info.Status, info.Signal)
		}
		ids = append(ids, c.ID())
	}
	active := create(t, s, Meta{})
	all, err := s.List(Filter{})
	if err != nil || len(all) != 5 || all[0].ID != active.ID() || all[4].ID != ids[0] {
		t.Fatalf("List = %d, %v; want 5 newest first", len(all), err)
	}
	killed, err := s.List(Filter{Status: StatusKilled})
	if err != nil || len(killed) != 1 || killed[0].ID != ids[1] {
		t.Errorf("List(killed) = %v, %v", killed, err)
	}
	if got, _ := s.List(Filter{Limit: 2}); len(got) != 2 {
		t.Errorf("List(limit 2) = %d", len(got))
	}
	if _, err := active.Finish(Receipt{Status: StatusRunning}); errcode.CodeOf(err) != errcode.InvalidArgument {
		t.Errorf("Finish(running) = %v", err)
	}
	finish(t, active, exited(1))
	if _, err := active.Finish(exited(1)); err == nil {
		t.Error("second Finish succeeded")
	}
	if _, err := active.Stdout().Write([]byte("late")); err == nil {
		t.Error("Write after Finish succeeded")
	}
}
