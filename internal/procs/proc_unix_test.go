//go:build linux || darwin

package procs

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestSignalNames(t *testing.T) {
	_, _, st := run(t, Spec{Command: "kill -TERM $$", Shell: "sh"}, "")
	if st.Signal != "SIGTERM" || st.ExitCode != -1 || st.Killed {
		t.Errorf("self-terminated: %+v", st)
	}

	dir := t.TempDir()
	p, err := Start(Spec{Argv: []string{self(t), dir + "/pid"}, Dir: dir,
		Env: map[string]string{helperEnv: "sleep"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitForPid(dir+"/pid", 10*time.Second)
	p.Kill()
	st, err = p.Wait()
	if err != nil || st.Signal != "SIGKILL" || st.ExitCode != -1 || !st.Killed {
		t.Errorf("killed: %+v, %v", st, err)
	}
}

// TestShellTree: a tree built by a shell, with a setsid'd grandchild that
// ignores SIGTERM, is gone after Terminate.
func TestShellTree(t *testing.T) {
	dir := t.TempDir()
	script := `trap '' TERM; ` + QuotePOSIX([]string{self(t), dir + "/pid", "setsid", "ignore-term"}) + ` & wait`
	p, err := Start(Spec{Command: script, Shell: "sh", Dir: dir,
		Env: map[string]string{helperEnv: "spawn"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	gc := waitForPid(dir+"/pid", 10*time.Second)
	if gc == 0 {
		t.Fatal("no grandchild pid")
	}
	p.Terminate(200 * time.Millisecond)
	if st, _ := p.Wait(); !st.Killed {
		t.Errorf("state %+v, want Killed", st)
	}
	if !gone(t, gc, 3*time.Second) {
		t.Errorf("grandchild %d survived", gc)
	}
}

// TestOtherChildrenUnaffected: while commands with orphaned descendants
// are tracked and reaped, os/exec's own Wait for hostlink's other children
// still gets their status (the reaper takes only pids it knows).
func TestOtherChildrenUnaffected(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			dir := t.TempDir()
			p, err := Start(Spec{Argv: []string{self(t), dir + "/pid", "setsid", "leave"}, Dir: dir,
				Env: map[string]string{helperEnv: "spawn"}}, nil, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if gc := waitForPid(dir+"/pid", 10*time.Second); gc == 0 {
				t.Error("no grandchild")
			}
			p.Wait()
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		c := exec.Command(self(t), "7")
		c.Env = append(os.Environ(), helperEnv+"=streams")
		err := c.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 7 {
			t.Fatalf("plain exec.Command: %v", err)
		}
	}
}

// TestExtraFiles: a file in Spec.ExtraFiles is the child's descriptor 3.
func TestExtraFiles(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.WriteString("through fd 3")
	w.Close()
	out, _, st := run(t, Spec{Command: "cat <&3", Shell: "sh", ExtraFiles: []*os.File{r}}, "")
	if out != "through fd 3" || st.ExitCode != 0 {
		t.Fatalf("child read %q, %+v", out, st)
	}
}
