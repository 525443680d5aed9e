package procs

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestNoOrphans: the shortcut that spares an exited command's end the
// reading of the whole process table holds only while hostlink has no
// child it did not start outside its own group: a child started through
// os/exec (in hostlink's group) leaves it true, an orphan reparented to
// hostlink makes it false until it is gone.
func TestNoOrphans(t *testing.T) {
	KeepDescendants()
	if !tracker.noOrphans() {
		t.Fatal("noOrphans false with no children (is /proc/PID/task/TID/children there?)")
	}
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if !tracker.noOrphans() {
		t.Error("a child started in hostlink's group counted as an orphan")
	}
	c.Process.Kill()
	c.Wait()

	// A grandchild in its own session whose parent exits: reparented here.
	pidfile := filepath.Join(t.TempDir(), "pid")
	sp := exec.Command(self(t), pidfile, "setsid", "leave")
	sp.Env = append(sp.Environ(), helperEnv+"=spawn")
	if err := sp.Run(); err != nil {
		t.Fatal(err)
	}
	gc := waitForPid(pidfile, 10*time.Second)
	if gc == 0 {
		t.Fatal("no grandchild")
	}
	if tracker.noOrphans() {
		t.Error("an orphan reparented to hostlink was not seen")
	}
	killPid(gc)
	if !gone(t, gc, 10*time.Second) {
		t.Fatal("the orphan survived SIGKILL")
	}
	reap(gc)
	if !tracker.noOrphans() {
		t.Error("noOrphans still false once the orphan was reaped")
	}
}
