package procs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
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

func init() {
	osHelpers["joiner-parent"] = joinerParent
	osHelpers["joiner"] = joiner
}

// joinerParent starts a joiner, then exits once dir/exit exists, leaving
// it an orphan. Args: dir, the process group to join.
func joinerParent(args []string) int {
	c := exec.Command(os.Args[0], args...)
	c.Env = append(os.Environ(), helperEnv+"=joiner")
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	waitForFile(filepath.Join(args[0], "exit"))
	return 0
}

// joiner writes its pid, and once dir/join exists tries to move into the
// process group args[1] (hostlink's, as a command evading its tree kill
// would), and writes dir/joined or dir/refused. Args: dir, group.
func joiner(args []string) int {
	writePid(filepath.Join(args[0], "pid"), os.Getpid())
	waitForFile(filepath.Join(args[0], "join"))
	pgid, _ := strconv.Atoi(args[1])
	outcome := "joined"
	if err := syscall.Setpgid(0, pgid); err != nil {
		outcome = "refused"
	}
	writePid(filepath.Join(args[0], outcome), os.Getpid())
	time.Sleep(time.Hour)
	return 0
}

func waitForFile(path string) {
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNoEscapeIntoHostlinksGroup: a command's descendant cannot join
// hostlink's own process group (the command runs in a session of its
// own), where the tracker would take it for a child of hostlink's and
// pass over it; orphaned, it ends with its command.
func TestNoEscapeIntoHostlinksGroup(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(Spec{Argv: []string{self(t), dir, strconv.Itoa(syscall.Getpgrp())}, Dir: dir,
		Env: map[string]string{helperEnv: "joiner-parent"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	gc := waitForPid(filepath.Join(dir, "pid"), 20*time.Second)
	if gc == 0 {
		p.Kill()
		t.Fatal("no joiner")
	}
	defer killPid(gc)
	os.WriteFile(filepath.Join(dir, "join"), nil, 0o600)
	var outcome string
	tstest.WaitFor(t, time.Minute, "the joiner's attempt", func() bool {
		for _, o := range []string{"joined", "refused"} {
			if _, err := os.Stat(filepath.Join(dir, o)); err == nil {
				outcome = o
				return true
			}
		}
		return false
	})
	if outcome != "refused" {
		t.Errorf("a command's descendant joined hostlink's process group")
	}
	os.WriteFile(filepath.Join(dir, "exit"), nil, 0o600)
	p.Wait()
	if !gone(t, gc, 10*time.Second) {
		t.Errorf("the orphaned descendant %d survived its command", gc)
	}
}
