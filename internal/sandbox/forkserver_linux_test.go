package sandbox_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// sh runs line through sh in w's sandbox and returns its output.
func (w *world) sh(t *testing.T, line string) string {
	t.Helper()
	var out strings.Builder
	p, err := procs.Start(procs.Spec{Command: line, Shell: "sh", Dir: w.workdir, Sandbox: &sandbox.Policy{Mode: sandbox.Workdir, Workdir: w.workdir, TmpRoot: w.pol.TmpRoot}}, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := p.Wait(); st.ExitCode != 0 {
		t.Fatalf("%q: exit %d: %s", line, st.ExitCode, out.String())
	}
	return out.String()
}

// The fork server starts each command as hostlink's own child, with
// no_new_privs and no descriptor of the server's, and a server that ends
// is replaced by the next command.
func TestForkServer(t *testing.T) {
	w := newWorld(t, false)
	if ppid := strings.TrimSpace(w.sh(t, "echo $PPID")); ppid != strconv.Itoa(os.Getpid()) {
		t.Errorf("the command's parent is %s, want hostlink (%d)", ppid, os.Getpid())
	}
	// no_new_privs, whatever Landlock the kernel has.
	if nnp := strings.TrimSpace(w.sh(t, "grep NoNewPrivs /proc/self/status")); nnp != "NoNewPrivs:\t1" {
		t.Errorf("the command's %q, want no_new_privs set", nnp)
	}
	// The shell's own descriptors, against those of the same shell
	// started unconfined from this process (which may hold descriptors
	// of the test's own parents): nothing of the server's.
	const list = `for f in /proc/$$/fd/*; do echo "${f##*/}"; done`
	var direct strings.Builder
	p, err := procs.Start(procs.Spec{Command: list, Shell: "sh", Dir: w.workdir}, &direct, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	if got := w.sh(t, list); got != direct.String() {
		t.Errorf("the command holds descriptors %q, unconfined %q", strings.Fields(got), strings.Fields(direct.String()))
	}
	server := serverPid(t)
	if err := syscall.Kill(server, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The first command after the kill may still find the old server
	// (hostlink has not reaped it yet): it fails typed (SANDBOX_FAILED),
	// never unconfined, and the next one starts a new server.
	for i := 0; i < 2; i++ {
		var out strings.Builder
		p, err := procs.Start(procs.Spec{Command: "echo ok", Shell: "sh", Dir: w.workdir, Sandbox: &sandbox.Policy{Mode: sandbox.Workdir, Workdir: w.workdir, TmpRoot: w.pol.TmpRoot}}, &out, nil)
		if err != nil {
			if i > 0 || !strings.Contains(err.Error(), "SANDBOX_FAILED") || !strings.Contains(err.Error(), "fork server") {
				t.Fatalf("command %d after the server was killed: %v", i+1, err)
			}
			t.Logf("the first command after the kill: %v", err)
			continue
		}
		p.Wait()
		if out.String() != "ok\n" {
			t.Fatalf("after the server was killed: %q", out.String())
		}
		if again := serverPid(t); again == server {
			t.Fatalf("the killed server %d still serves", server)
		}
		return
	}
}

// serverPid finds the fork server among this process's children.
func serverPid(t *testing.T) int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 || !strings.HasPrefix(string(cmdline), "hostlink-sandbox-server") {
			continue
		}
		if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			return pid
		}
	}
	t.Fatal("no fork server runs")
	return 0
}
