package procs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestQuoteWindowsCreateProcess: a QuoteWindows line given to
// CreateProcess as is reaches the program as exactly the arguments.
func TestQuoteWindowsCreateProcess(t *testing.T) {
	args := append([]string{self(t)}, hardArgs...)
	c := exec.Command(self(t))
	c.SysProcAttr = &syscall.SysProcAttr{CmdLine: QuoteWindows(args)}
	c.Env = []string{helperEnv + "=argv"}
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if !slices.Equal(got, hardArgs) {
		t.Errorf("got  %q\nwant %q", got, hardArgs)
	}
}

// TestCtrlBreak: Terminate sends CTRL_BREAK_EVENT first. Where hostlink
// shares no console with the child (a daemon; Wine without a display)
// GenerateConsoleCtrlEvent fails, the grace passes and the Job Object is
// terminated; either way the process and its child are gone.
func TestCtrlBreak(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "grandchild.pid")
	p, err := Start(Spec{Argv: []string{self(t), pidfile}, Dir: dir,
		Env: map[string]string{helperEnv: "spawn"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	gc := waitForPid(pidfile, 20*time.Second)
	const grace = time.Second
	t0 := time.Now()
	p.Terminate(grace)
	d := time.Since(t0)
	st, _ := p.Wait()
	if d < grace {
		t.Logf("CTRL_BREAK_EVENT ended the command after %v: %+v", d, st)
	} else {
		t.Logf("CTRL_BREAK_EVENT did not end the command (no shared console); the Job Object was terminated after %v: %+v", d, st)
	}
	if !st.Killed {
		t.Errorf("state %+v, want Killed", st)
	}
	if gc == 0 || !gone(t, gc, 3*time.Second) {
		t.Errorf("grandchild %d survived", gc)
	}
}

// TestExtraFilesRefused: Windows has no inherited descriptors by number.
func TestExtraFilesRefused(t *testing.T) {
	_, err := Start(Spec{Argv: []string{"cmd", "/c", "exit 0"}, Dir: t.TempDir(), ExtraFiles: []*os.File{os.Stdin}}, nil, nil)
	if e := errcode.As(err); e == nil || e.Code != errcode.InvalidArgument {
		t.Fatalf("ExtraFiles on Windows: %v", err)
	}
}
