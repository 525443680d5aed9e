//go:build unix

package companion

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/ops/opstest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// The helper route's tests start this test binary as the helper: with
// HOSTLINK_COMPANION_TEST_HELPER set, TestMain runs a companion over its
// standard input and output (what hostlink companion --stdio does)
// instead of the tests. Real process, real pipes, as on WSL where the
// helper is hostlink.exe run through interop.
func TestMain(m *testing.M) {
	if dir := os.Getenv("HOSTLINK_COMPANION_TEST_HELPER"); dir != "" {
		os.Exit(helperMain(dir, os.Args[1:]))
	}
	if dir := os.Getenv("HOSTLINK_COMPANION_TEST_RUNTIME"); dir != "" {
		os.Exit(runtimeMain(dir))
	}
	os.Exit(m.Run())
}

// runtimeMain is a runtime hostlink in its own process: it starts this
// binary as its helper, says "ready" once the helper runs, and waits to
// be killed.
func runtimeMain(dir string) int {
	pairs, err := OpenPairings(filepath.Join(dir, "runtime"))
	if err != nil {
		fmt.Println(err)
		return 2
	}
	rt := NewRuntime(RuntimeOptions{Pairings: pairs})
	exe, _ := os.Executable()
	rt.StartHelper(Helper{Argv: []string{exe}, NoDesktop: true, Env: []string{"HOSTLINK_COMPANION_TEST_HELPER=" + dir}})
	for rt.HelperState() == nil || !rt.HelperState().Connected {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("ready")
	select {}
}

// helperMain is the test helper: captures and an audit log in dir, its
// pid in dir/pid, flags as the runtime passes them.
func helperMain(dir string, args []string) int {
	os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o600)
	key, _ := os.ReadFile(filepath.Join(dir, "audit.key"))
	log, err := audit.Open(audit.Options{Dir: filepath.Join(dir, "audit"), Key: key, MachineID: "host", Version: "v"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer log.Close()
	o := HostOptions{Streams: &Streams{In: os.Stdin, Out: os.Stdout}, Name: "helper-test", Audit: log,
		AuditPeer: fmt.Sprintf("parent pid %d", os.Getppid())}
	if v := os.Getenv("HOSTLINK_COMPANION_TEST_VERSION"); v != "" {
		o.version, _ = strconv.Atoi(v)
	}
	if slices.Contains(args, "--commands") {
		st, err := capture.Open(capture.Options{Dir: filepath.Join(dir, "captures")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer st.Close()
		o.Captures = st
		o.Sandbox.TmpRoot = filepath.Join(dir, "sandbox")
	}
	if !slices.Equal(args[:2], []string{"companion", "--stdio"}) {
		fmt.Fprintln(os.Stderr, "helper started with", args)
		return 2
	}
	if err := Run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

// helperRig is a runtime with this test binary as its helper.
func helperRig(t *testing.T, env ...string) (*rig, string) {
	t.Helper()
	r := newRig(t, false)
	dir := t.TempDir()
	key := make([]byte, audit.KeySize)
	if err := os.WriteFile(filepath.Join(dir, "audit.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r.rt.StartHelper(Helper{Argv: []string{exe}, Commands: true, NoDesktop: true,
		Env: append([]string{"HOSTLINK_COMPANION_TEST_HELPER=" + dir}, env...)})
	return r, dir
}

func helperPid(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	return pid
}

func status(t *testing.T, r *rig) companionapi.StatusResult {
	t.Helper()
	m, code := opstest.Call(context.Background(), r.reg, "companion_status", map[string]any{})
	if code != "" {
		t.Fatalf("companion_status: %s", code)
	}
	var st companionapi.StatusResult
	remarshal(t, m, &st)
	return st
}

// TestHelperRoute: the runtime starts its helper, which serves it over
// its standard streams without any pairing; commands run through it with
// verified transfers, and the helper records them in its own audit log
// with the runtime as the peer.
func TestHelperRoute(t *testing.T) {
	r, dir := helperRig(t)
	r.waitConnected(1)
	s := r.rt.Sessions()[0]
	if s.ID != helperID || s.Route != RouteWSLInterop || !slices.Contains(s.Capabilities, CapOutput) {
		t.Fatalf("helper session %+v", s)
	}
	// Not paired, yet not dropped by the revocation check.
	time.Sleep(4 * r.rt.o.RevokeCheck)
	work := t.TempDir()
	res := r.run(countingCommand(t, work, 200<<10))
	if res.TransferError != nil || res.Transfer != CapOutput || res.Companion != helperID ||
		int64(len(res.Stdout)) != res.Receipt.Stdout.StoredBytes || res.Receipt.Stdout.StoredBytes < 200<<10 {
		t.Fatalf("command through the helper: %+v %+v", res.TransferError, res.Receipt)
	}
	st := status(t, r)
	if st.Helper == nil || !st.Helper.Connected || st.Helper.Starts != 1 || len(st.Connected) != 1 || st.Connected[0].Route != RouteWSLInterop {
		t.Fatalf("status %+v helper %+v", st.Connected, st.Helper)
	}
	recs := auditRecords(t, filepath.Join(dir, "audit"))
	var run *auditLine
	for i, l := range recs {
		if l.Op == "companion.command.run" {
			run = &recs[i]
		}
	}
	if run == nil || run.Transport != "wsl_interop" || run.Peer != fmt.Sprintf("parent pid %d", os.Getpid()) || run.Code != "OK" ||
		!strings.Contains(string(run.Details), res.Receipt.CaptureID) {
		t.Fatalf("the helper's audit record of the command: %+v (all: %v)", run, auditOps(recs))
	}
	if !slices.Contains(auditOps(recs), "companion_connect") || !slices.Contains(auditOps(recs), "companion.capture.open") ||
		slices.Contains(auditOps(recs), "companion.capture.read") {
		t.Fatalf("helper audit ops: %v", auditOps(recs))
	}
	if rep, err := audit.Verify(filepath.Join(dir, "audit"), "", make([]byte, audit.KeySize)); err != nil || rep.Failure != nil || rep.Records < 3 {
		t.Fatalf("helper audit chain: %+v %v", rep, err)
	}
}

// TestHelperRestartAndStop: a helper that dies is started again; closing
// the runtime stops it.
func TestHelperRestartAndStop(t *testing.T) {
	r, dir := helperRig(t)
	r.waitConnected(1)
	first := helperPid(t, dir)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := status(t, r)
		if st.Helper.Starts == 2 && st.Helper.Connected {
			if st.Helper.LastError == "" || st.Helper.LastExit == "" {
				t.Fatalf("restart without the reason: %+v", st.Helper)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("helper not restarted: %+v", st.Helper)
		}
		time.Sleep(50 * time.Millisecond)
	}
	second := helperPid(t, dir)
	if second == first {
		t.Fatal("the same helper pid after a restart")
	}
	r.rt.Close()
	if err := syscall.Kill(second, 0); err == nil {
		t.Fatalf("helper %d still running after the runtime closed", second)
	}
}

// TestHelperOutdated: an outdated helper is refused with the version it
// needs, as a network companion is.
func TestHelperOutdated(t *testing.T) {
	r, _ := helperRig(t, "HOSTLINK_COMPANION_TEST_VERSION=1")
	r.rt.mu.Lock()
	r.rt.o.minVersion = 2
	r.rt.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := status(t, r)
		if len(st.Refused) > 0 && st.Helper.LastError != "" {
			if st.Refused[0].Code != string(CodeUpgradeRequired) || st.Refused[0].Needed != 2 || len(st.Connected) != 0 ||
				!strings.Contains(st.Helper.LastError, string(CodeUpgradeRequired)) {
				t.Fatalf("refusal %+v helper %+v", st.Refused, st.Helper)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("outdated helper not refused: %+v %+v", st.Refused, st.Helper)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type auditLine struct {
	Op, Transport, Peer, Code string
	Details                   json.RawMessage
}

func auditRecords(t *testing.T, dir string) []auditLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l auditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

func auditOps(ls []auditLine) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Op)
	}
	return out
}

// TestHelperDiesWithRuntime: the helper does not outlive a runtime
// killed with SIGKILL: it is gone within a second of the runtime's death.
func TestHelperDiesWithRuntime(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "audit.key"), make([]byte, audit.KeySize), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "HOSTLINK_COMPANION_TEST_RUNTIME="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("runtime: %q", line)
	}
	helper := helperPid(t, dir)
	cmd.Process.Kill()
	cmd.Wait()
	if !tstest.Eventually(time.Second, func() bool { return exited(helper) }) {
		syscall.Kill(helper, syscall.SIGKILL)
		t.Fatalf("helper %d alive a second after its runtime died", helper)
	}
}

// exited reports whether pid is gone or a zombie.
func exited(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}
