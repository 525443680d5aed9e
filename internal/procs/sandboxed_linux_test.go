package procs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/tstest"
)

// sandboxedEnv makes this test binary run every command it starts
// through the sandbox.
// (Its value is the directory that holds the commands' temporary
// directories.)
const sandboxedEnv = "HOSTLINK_PROCS_TEST_SANDBOXED"

func init() {
	tmpRoot := os.Getenv(sandboxedEnv)
	if tmpRoot == "" {
		return
	}
	exe, _ := os.Executable()
	testSandbox = func(spec Spec) *sandbox.Policy {
		// The test binary, which the tests run as a child through
		// shells too, lives below the /tmp the sandbox replaces.
		// A coverage build writes its counters to GOCOVERDIR, a test's
		// temporary directory: the private /tmp would hide it.
		p := &sandbox.Policy{Mode: sandbox.Workdir, Workdir: spec.Dir, ReadOnly: []string{filepath.Dir(exe)}, TmpRoot: tmpRoot}
		if d := spec.Env["GOCOVERDIR"]; d != "" {
			p.Writable = append(p.Writable, d)
		}
		return p
	}
}

// Process-tree kill, timeouts, captures, stdin and exit codes behave the
// same for a sandboxed command: the whole suite passes again with every
// command confined to its directory.
func TestSuiteSandboxed(t *testing.T) {
	if testSandbox != nil {
		t.Skip("this is the sandboxed run")
	}
	if st := sandbox.Probe(); st.Mode != sandbox.Workdir {
		tstest.Missing(t, "commands cannot be sandboxed here: "+st.Reason)
	}
	cmd := exec.Command(self(t), "-test.count=1", "-test.skip=TestSuiteSandboxed")
	if testing.Verbose() {
		cmd.Args = append(cmd.Args, "-test.v")
	}
	cmd.Env = append(os.Environ(), sandboxedEnv+"="+filepath.Join(t.TempDir(), "sandbox"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the suite failed with every command sandboxed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestSandboxedTmpRemoved checks that a sandboxed command's private
// temporary directory is removed after it ends: after its result, which
// does not wait for the removal, but before Tidied, as KillAll waits for.
func TestSandboxedTmpRemoved(t *testing.T) {
	if st := sandbox.Probe(); st.Mode != sandbox.Workdir {
		tstest.Missing(t, "commands cannot be sandboxed here: "+st.Reason)
	}
	dir, root := t.TempDir(), filepath.Join(t.TempDir(), "sandbox")
	var out strings.Builder
	p, err := Start(Spec{Command: `echo kept > "$TMPDIR/f" && cat "$TMPDIR/f"`, Shell: "sh", Dir: dir,
		Sandbox: &sandbox.Policy{Mode: sandbox.Workdir, Workdir: dir, TmpRoot: root}}, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(); err != nil || st.ExitCode != 0 || out.String() != "kept\n" {
		t.Fatalf("exit %d, %v, output %q", st.ExitCode, err, out.String())
	}
	<-p.Tidied()
	if left, err := os.ReadDir(root); err != nil || len(left) != 0 {
		t.Fatalf("left in %s: %v %v", root, left, err)
	}
}
