package companion

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/ops/opstest"
)

// rig is a runtime and its registry, listening on loopback.
type rig struct {
	t     testing.TB
	rt    *Runtime
	pairs *Pairings
	reg   *ops.Registry
	desk  *desktop.Service
	addr  string
}

func newRig(t testing.TB, withDesktop bool) *rig {
	t.Helper()
	return newRigWith(t, withDesktop, nil)
}

// newRigWith is newRig with configure, if not nil, adjusting the runtime's
// options first.
func newRigWith(t testing.TB, withDesktop bool, configure func(*RuntimeOptions)) *rig {
	t.Helper()
	pairs, err := OpenPairings(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pairs.Close() })
	key := make([]byte, audit.KeySize)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: t.TempDir(), Key: key, MachineID: "m", Version: "v"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	r := &rig{t: t, pairs: pairs, reg: ops.New(ops.Options{Audit: log})}
	o := RuntimeOptions{Pairings: pairs, RevokeCheck: 50 * time.Millisecond}
	if withDesktop {
		// The runtime itself has no desktop, as in a container.
		r.desk = desktop.New(desktop.Options{Open: func(context.Context) ([]native.Backend, native.Readiness) {
			return nil, native.Readiness{Reason: "no_display"}
		}, Settle: 100 * time.Millisecond})
		desktop.Register(r.reg, r.desk)
		o.Desktops = r.desk
	}
	if configure != nil {
		configure(&o)
	}
	r.rt = NewRuntime(o)
	Register(r.reg, r.rt)
	if r.addr, err = r.rt.Listen("127.0.0.1:0", false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.rt.Close() })
	return r
}

// pair runs the pairing exchange and returns the companion's credential.
func (r *rig) pair() Credential {
	r.t.Helper()
	code, err := r.pairs.NewCode()
	if err != nil {
		r.t.Fatal(err)
	}
	c, err := Pair(context.Background(), r.addr, code, "host-test")
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// companion runs a companion with a capture store until the test ends and
// waits until the runtime has it. It returns the store and Run's result.
func (r *rig) companion(o HostOptions) (*capture.Store, <-chan error) {
	r.t.Helper()
	if o.Captures == nil {
		st, err := capture.Open(capture.Options{Dir: filepath.Join(r.t.TempDir(), "captures")})
		if err != nil {
			r.t.Fatal(err)
		}
		r.t.Cleanup(func() { st.Close() })
		o.Captures = st
	}
	if o.Sandbox.TmpRoot == "" {
		// Commands run in the default sandbox, where it works.
		o.Sandbox.TmpRoot = filepath.Join(r.t.TempDir(), "sandbox")
	}
	o.Runtime = r.addr
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() { done <- Run(ctx, o); close(finished) }()
	r.t.Cleanup(func() { cancel(); <-finished })
	r.waitConnected(1)
	return o.Captures, done
}

func (r *rig) waitConnected(n int) {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(r.rt.Sessions()) != n {
		if time.Now().After(deadline) {
			r.t.Fatalf("%d companions connected, want %d", len(r.rt.Sessions()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *rig) run(args map[string]any) companionapi.RunResult {
	r.t.Helper()
	m, code := opstest.Call(context.Background(), r.reg, "companion_run_command", args)
	if code != "" {
		r.t.Fatalf("companion_run_command: %s", code)
	}
	var res companionapi.RunResult
	remarshal(r.t, m, &res)
	return res
}

// countingCommand appends a line to a file on every run and prints n
// bytes of multi-byte UTF-8 text, so chunk boundaries split characters.
func countingCommand(t *testing.T, dir string, n int) map[string]any {
	marks := filepath.Join(dir, "runs")
	if runtime.GOOS == "windows" {
		t.Skip("the counting command is a POSIX shell script")
	}
	script := fmt.Sprintf(`echo run >> %q; i=0; while [ $i -lt %d ]; do printf 'é€😀\n'; i=$((i+1)); done; echo err >&2`, marks, n/10+1)
	return map[string]any{"command": script, "shell": "sh", "cwd": dir}
}

func runs(t *testing.T, dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "runs"))
	return strings.Count(string(b), "run\n")
}

func TestRunCommandVerifiedTransfer(t *testing.T) {
	r := newRig(t, false)
	_, _ = r.companion(HostOptions{Credential: r.pair(), Name: "h"})
	dir := t.TempDir()
	args := countingCommand(t, dir, 300<<10) // several chunks
	res := r.run(args)
	if res.TransferError != nil || res.Transfer != CapOutput {
		t.Fatalf("transfer: %+v", res.TransferError)
	}
	if res.Receipt.Status != "exited" || *res.Receipt.ExitCode != 0 || res.Receipt.Stdout.StoredBytes < 300<<10 {
		t.Fatalf("receipt %+v", res.Receipt)
	}
	if int64(len(res.Stdout)) != res.Receipt.Stdout.StoredBytes || !strings.HasPrefix(res.Stdout, "é€😀\n") ||
		strings.ContainsRune(res.Stdout, '\uFFFD') || res.Stderr != "err\n" {
		t.Fatalf("stdout %d bytes (want %d), stderr %q", len(res.Stdout), res.Receipt.Stdout.StoredBytes, res.Stderr)
	}
	if runs(t, dir) != 1 {
		t.Fatalf("ran %d times", runs(t, dir))
	}
}

// TestFaultyCompanion: a corrupted, dropped or reordered chunk fails the
// transfer with the receipt kept; a retry with the same idempotency key
// transfers the same capture intact, and the command ran once.
func TestFaultyCompanion(t *testing.T) {
	for _, kind := range []string{"corrupt", "drop", "reorder"} {
		t.Run(kind, func(t *testing.T) {
			r := newRig(t, false)
			r.companion(HostOptions{Credential: r.pair(), fault: &fault{kind: kind, chunk: 1}})
			dir := t.TempDir()
			args := countingCommand(t, dir, 300<<10)
			args["idempotency_key"] = "k1"
			res := r.run(args)
			if res.TransferError == nil || res.TransferError.Code != CodeTransferFailed {
				t.Fatalf("the %s fault was not caught: %+v", kind, res.TransferError)
			}
			if res.Stdout != "" || res.Receipt.CaptureID == "" || res.Receipt.Status != "exited" {
				t.Fatalf("failed transfer result: %+v", res)
			}
			t.Logf("%s: %s", kind, res.TransferError.Message)
			again := r.run(args)
			if again.TransferError != nil || !again.Receipt.Reused || again.Receipt.CaptureID != res.Receipt.CaptureID ||
				int64(len(again.Stdout)) != again.Receipt.Stdout.StoredBytes {
				t.Fatalf("retry: %+v reused=%v", again.TransferError, again.Receipt.Reused)
			}
			if n := runs(t, dir); n != 1 {
				t.Fatalf("the command ran %d times", n)
			}
		})
	}
}

// TestCutMidTransfer: the connection drops during a transfer; the result
// keeps the receipt, and the companion's capture, pinned while the
// transfer was open, expires on schedule once the connection is gone.
func TestCutMidTransfer(t *testing.T) {
	r := newRig(t, false)
	now := time.Now()
	clock := make(chan time.Time, 1)
	clock <- now
	st, err := capture.Open(capture.Options{Dir: t.TempDir(), Retention: time.Minute, Now: func() time.Time {
		n := <-clock
		clock <- n
		return n
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	advance := func(d time.Duration) { n := <-clock; clock <- n.Add(d) }
	_, done := r.companion(HostOptions{Credential: r.pair(), Captures: st, fault: &fault{kind: "cut", chunk: 2}})
	dir := t.TempDir()
	res := r.run(countingCommand(t, dir, 300<<10))
	if res.TransferError == nil || res.Receipt.CaptureID == "" || res.Receipt.Status != "exited" {
		t.Fatalf("cut transfer: %+v", res)
	}
	if err := <-done; errcode.CodeOf(err) != CodeUnavailable {
		t.Fatalf("companion ended with %v", err)
	}
	advance(2 * time.Minute)
	if n, err := st.Cleanup(); err != nil || n != 1 {
		t.Fatalf("after disconnect Cleanup removed %d (%v)", n, err)
	}
}

// TestTransferPinsCapture: an open transfer keeps an expired capture; its
// close lets it expire.
func TestTransferPinsCapture(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	st, err := capture.Open(capture.Options{Dir: t.TempDir(), Retention: time.Minute, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, _, err := st.Create(capture.Meta{Op: "companion_run_command", Command: "x"})
	if err != nil {
		t.Fatal(err)
	}
	c.Stdout().Write([]byte("hello"))
	if _, err := c.Finish(capture.Receipt{Status: capture.StatusExited}); err != nil {
		t.Fatal(err)
	}
	tr := newTransfers(st)
	if _, _, err := tr.openCapture(c.ID()); errcode.CodeOf(err) != capture.CodeNotFound {
		t.Fatalf("a capture of another connection opened: %v", err)
	}
	tr.own(c.ID())
	out, _, err := tr.openCapture(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if n, _ := st.Cleanup(); n != 0 {
		t.Fatal("Cleanup removed a capture with an open transfer")
	}
	if _, _, err := tr.handle(nil, "capture.close", mustJSON(closeParams{TransferID: out.(openResult).TransferID})); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.Cleanup(); n != 1 {
		t.Fatal("Cleanup kept the capture after the transfer closed")
	}
}

// TestInlinePathForOldCompanion: a companion without
// system_command_output_v1 answers inline.
func TestInlinePathForOldCompanion(t *testing.T) {
	r := newRig(t, false)
	r.companion(HostOptions{Credential: r.pair(), caps: []string{CapCommands}})
	dir := t.TempDir()
	res := r.run(countingCommand(t, dir, 100<<10))
	if res.Transfer != "inline" || res.TransferError != nil || !strings.Contains(res.Stdout, "bytes omitted") ||
		len(res.Stdout) > inlineBytes+100 {
		t.Fatalf("inline result: transfer %s, %d bytes", res.Transfer, len(res.Stdout))
	}
}

func TestUpgradeRequired(t *testing.T) {
	r := newRig(t, true)
	r.rt.mu.Lock()
	r.rt.o.minVersion = ProtocolVersion + 1 // this companion is then too old
	r.rt.mu.Unlock()
	cred := r.pair()
	err := Run(context.Background(), HostOptions{Runtime: r.addr, Credential: cred})
	var e *errcode.Error
	if !errors.As(err, &e) || e.Code != CodeUpgradeRequired || e.Details["needed_version"] != float64(ProtocolVersion+1) {
		t.Fatalf("old companion: %v", err)
	}
	m, _ := opstest.Call(context.Background(), r.reg, "companion_status", nil)
	if refused := m["refused"].([]any); len(refused) != 1 || refused[0].(map[string]any)["code"] != string(CodeUpgradeRequired) {
		t.Fatalf("status: %v", m)
	}
	// Discovery reports it too, until the companion is updated.
	m, _ = opstest.Call(context.Background(), r.reg, "computer_desktops", map[string]any{})
	ds := m["desktops"].([]any)
	if len(ds) != 1 || ds[0].(map[string]any)["operations"].(map[string]any)["computer_observe"].(map[string]any)["reason"] != string(CodeUpgradeRequired) {
		t.Fatalf("computer_desktops: %v", m)
	}
	r.rt.mu.Lock()
	r.rt.o.minVersion = ProtocolVersion
	r.rt.mu.Unlock()
	r.companion(HostOptions{Credential: cred})
	m, _ = opstest.Call(context.Background(), r.reg, "computer_desktops", map[string]any{})
	if ds := m["desktops"].([]any); len(ds) != 0 {
		t.Fatalf("the outdated entry outlived the update: %v", m)
	}
}

// TestPairingCodeAndUnpair: codes are single use; unpairing from the
// companion closes its connection and its credential is refused after.
func TestPairingCodeAndUnpair(t *testing.T) {
	r := newRig(t, false)
	code, _ := r.pairs.NewCode()
	cred, err := Pair(context.Background(), r.addr, strings.ToLower(code), "h")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Pair(context.Background(), r.addr, code, "h"); errcode.CodeOf(err) != CodeNotPaired {
		t.Fatalf("a used code: %v", err)
	}
	if err := Run(context.Background(), HostOptions{Runtime: r.addr, Credential: Credential{ID: cred.ID, Secret: "wrong"}}); errcode.CodeOf(err) != CodeNotPaired {
		t.Fatalf("a wrong secret: %v", err)
	}
	_, done := r.companion(HostOptions{Credential: cred})
	if err := Unpair(context.Background(), r.addr, cred); err != nil {
		t.Fatal(err)
	}
	if err := <-done; errcode.CodeOf(err) != CodeNotPaired {
		t.Fatalf("the live connection ended with %v", err)
	}
	if err := Run(context.Background(), HostOptions{Runtime: r.addr, Credential: cred}); errcode.CodeOf(err) != CodeNotPaired {
		t.Fatalf("the old credential: %v", err)
	}
	// Revoking on the runtime (hostlink companion unpair there) closes a
	// live connection too.
	cred2 := r.pair()
	_, done = r.companion(HostOptions{Credential: cred2})
	if n, err := r.pairs.Revoke(""); err != nil || n != 1 {
		t.Fatalf("Revoke: %d %v", n, err)
	}
	if err := <-done; errcode.CodeOf(err) != CodeNotPaired {
		t.Fatalf("after revocation on the runtime: %v", err)
	}
}

func TestRuntimeURLLoopbackOnly(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{{"127.0.0.1:7718", true}, {"[::1]:7718", true}, {"localhost:1", true}, {"10.0.0.1:7718", false}, {"example.com:80", false}, {"nope", false}} {
		if _, err := RuntimeURL(tc.addr); (err == nil) != tc.ok {
			t.Errorf("RuntimeURL(%q): %v", tc.addr, err)
		}
	}
	if _, err := NewRuntime(RuntimeOptions{}).Listen("0.0.0.0:0", false); err == nil {
		t.Error("the runtime listened on every interface")
	}
}

func TestWSLRoute(t *testing.T) {
	r := WSLInterop(context.Background())
	rel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	wsl := runtime.GOOS == "linux" && (os.Getenv("WSL_DISTRO_NAME") != "" || strings.Contains(strings.ToLower(string(rel)), "microsoft"))
	if wsl {
		if !r.Available || !strings.Contains(r.Detail, "Windows") {
			t.Fatalf("under WSL the interop route: %+v", r)
		}
		return
	}
	want := "not_wsl"
	if runtime.GOOS != "linux" {
		want = "not_linux"
	}
	if r.Available || r.Reason != want || r.Detail == "" {
		t.Fatalf("route %+v, want not available with %s", r, want)
	}
	// The decision itself, for each reason.
	fake := func(files map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if s, ok := files[p]; ok {
				return []byte(s), nil
			}
			return nil, os.ErrNotExist
		}
	}
	noEnv := func(string) string { return "" }
	if got := wslInterop(context.Background(), "linux", noEnv, fake(map[string]string{"/proc/sys/kernel/osrelease": "5.15.0-microsoft-standard-WSL2"})); got.Reason != "interop_disabled" {
		t.Errorf("WSL without interop: %+v", got)
	}
}

func mustJSON(v any) []byte {
	b, err := jsonMarshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestCallerGone: when the runtime's caller goes away, the companion ends
// the command; asking again with the same key returns that receipt and
// does not run it again.
func TestCallerGone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell")
	}
	r := newRig(t, false)
	r.companion(HostOptions{Credential: r.pair()})
	dir := t.TempDir()
	args := map[string]any{"command": "echo run >> runs; sleep 30", "shell": "sh", "cwd": dir, "idempotency_key": "gone"}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, code := opstest.Call(ctx, r.reg, "companion_run_command", args); code != errcode.Cancelled {
		t.Fatalf("cancelled call: %q", code)
	}
	start := time.Now()
	res := r.run(args)
	if res.Receipt.Status != "killed" || !res.Receipt.Reused || time.Since(start) > 20*time.Second {
		t.Fatalf("receipt after the caller left: %+v", res.Receipt)
	}
	if n := runs(t, dir); n != 1 {
		t.Fatalf("ran %d times", n)
	}
}
