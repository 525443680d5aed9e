package procs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func init() { osHelpers["orphans"] = orphansHelper }

// orphansHelper prints what noOrphans says with no children, beside a
// child started through os/exec, with an orphan reparented to it, and
// once that orphan is reaped. It runs in a process of its own: the test
// process holds the zombies and orphans of the tests before.
func orphansHelper(args []string) int {
	KeepDescendants()
	say := func(when string) { fmt.Printf("%s=%v\n", when, tracker.noOrphans()) }
	say("none")
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	say("exec_child")
	c.Process.Kill()
	c.Wait()

	// A grandchild in its own session whose parent exits: reparented here.
	pidfile := filepath.Join(args[0], "pid")
	sp := exec.Command(os.Args[0], pidfile, "setsid", "leave")
	sp.Env = append(os.Environ(), helperEnv+"=spawn")
	if err := sp.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	gc := waitForPid(pidfile, 10*time.Second)
	if gc == 0 {
		fmt.Fprintln(os.Stderr, "no grandchild")
		return 2
	}
	say("orphan")
	killPid(gc)
	waitExited(gc)
	reap(gc)
	say("reaped")
	return 0
}

// TestNoOrphans: the shortcut that spares an exited command's end the
// reading of the whole process table holds only while hostlink has no
// child it did not start outside its own group: a child started through
// os/exec (in hostlink's group) leaves it true, an orphan reparented to
// hostlink makes it false until it is reaped.
func TestNoOrphans(t *testing.T) {
	c := exec.Command(self(t), t.TempDir())
	c.Env = append(os.Environ(), helperEnv+"=orphans")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "none=true\nexec_child=true\norphan=false\nreaped=true\n"
	if got := string(out); got != want {
		t.Errorf("noOrphans said\n%s\nwant\n%s", strings.TrimSpace(got), strings.TrimSpace(want))
	}
}
