//go:build linux || darwin

package procs

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// A process a command started in a session of its own, whose parent then
// exited (a double fork), is still hostlink's descendant: the subreaper
// keeps it in hostlink's tree.
func TestDescendantAfterDoubleFork(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("macOS has no subreaper: an orphan goes to launchd (see Descendant)")
	}
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	// The subshell starts the sleeper in a new session and exits at once.
	script := `( setsid "$0" "$1" & ) ; exec sleep 60`
	p, err := Start(Spec{Argv: []string{"sh", "-c", script, self(t), pidfile}, Dir: dir, Env: map[string]string{helperEnv: "sleep"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { p.Kill(); p.Wait() }()
	orphan := waitForPid(pidfile, 10*time.Second)
	if orphan == 0 {
		t.Fatal("no orphan")
	}
	info, _ := readProc(orphan)
	if !Descendant(orphan) {
		t.Fatalf("the double-forked process %d (parent %d, group %d) is not a descendant", orphan, info.ppid, info.pgid)
	}
	t.Logf("process %d: parent %d (hostlink is %d), a descendant", orphan, info.ppid, os.Getpid())
}
