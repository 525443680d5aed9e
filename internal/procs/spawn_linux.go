package procs

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"github.com/hostlink/hostlink/internal/sandbox"
)

// Every child hostlink starts on Linux carries a parent-death signal
// (PR_SET_PDEATHSIG = SIGKILL), so the kernel kills it the moment hostlink
// dies, however it dies; all but the commands the sandbox's fork server
// starts (see below). The kernel ties that signal to the *thread* that
// forked the child, not the process: a child forked by a thread that later
// exits is SIGKILLed then, with hostlink alive. Go threads do exit (a
// goroutine that ends while locked to its thread takes the thread with it),
// so children are forked from one goroutine locked to its own thread for
// hostlink's life, which never unlocks and never returns. Forks are
// serialised by the tracker's lock anyway, so the one thread costs nothing
// but a hand-off per start.
//
// The signal survives execve (except into a set-user-ID or file-capability
// program, which drops it), so a launcher that sets up a sandbox and then
// execs the command keeps it. It is cleared in every fork, and the
// sandbox's fork server forks each command as hostlink's child
// (CLONE_PARENT), where Go cannot set it: Go's child checks that its
// parent is the process that forked it and, finding hostlink instead,
// would kill itself. Those commands are ended by the guardian when
// hostlink dies (see lifeline_unix.go), as every command's process group
// and descendants are.

var spawnThread struct {
	once sync.Once
	reqs chan func()
}

// onSpawnThread runs f on the spawning thread and returns when it has run.
func onSpawnThread(f func()) {
	spawnThread.once.Do(func() {
		spawnThread.reqs = make(chan func())
		go func() {
			runtime.LockOSThread() // for good: see above
			for f := range spawnThread.reqs {
				f()
			}
		}()
	})
	done := make(chan struct{})
	spawnThread.reqs <- func() { f(); close(done) }
	<-done
}

// spawn starts cmd from the spawning thread, with the parent-death signal
// unless the child must outlive hostlink for a moment (the guardian, which
// ends what hostlink's death left behind).
func spawn(cmd *exec.Cmd, dieWithHostlink bool) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if dieWithHostlink {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	var err error
	onSpawnThread(func() { err = cmd.Start() })
	return err
}

func init() {
	// The sandbox's fork server dies with hostlink, and is no command:
	// scans leave it alone, and its end is reaped here.
	sandbox.StartHelper = func(cmd *exec.Cmd) (func() error, error) {
		var pid int
		err := tracker.start(cmd, func() error { return spawn(cmd, true) }, func(p int) {
			pid = p
			tracker.own[p] = true
		})
		if err != nil {
			return nil, err
		}
		return func() error {
			err := cmd.Wait()
			tracker.forgetOwned(pid)
			return err
		}, nil
	}
}

// selfExe is this program, even if its file was replaced since it
// started (an upgrade).
func selfExe() (string, error) { return "/proc/self/exe", nil }
