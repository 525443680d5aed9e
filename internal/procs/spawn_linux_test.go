package procs

import (
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/tstest"
)

// TestChildOutlivesStartingThread: a child started from a goroutine whose
// thread then exits (a goroutine ending while locked to its thread takes
// the thread with it) keeps running. The parent-death signal fires when
// the thread that forked a child exits, so children are forked from
// hostlink's one long-lived spawning thread, never from the caller's.
func TestChildOutlivesStartingThread(t *testing.T) {
	pr, pw := io.Pipe()
	type started struct {
		p   *Process
		err error
		tid int
	}
	ch := make(chan started)
	var s started
	for s.p == nil && s.err == nil {
		go func() {
			runtime.LockOSThread()
			if unix.Gettid() == os.Getpid() {
				// The main thread never exits (Go parks it instead): try
				// on another.
				runtime.UnlockOSThread()
				ch <- started{}
				return
			}
			// Never unlocked: the thread ends with this goroutine.
			p, err := Start(Spec{Argv: []string{self(t)}, Dir: t.TempDir(), Stdin: true,
				Env: map[string]string{helperEnv: "cat"}}, pw, nil)
			ch <- started{p, err, unix.Gettid()}
		}()
		s = <-ch
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	defer s.p.Kill()
	go func() { s.p.Wait(); pw.Close() }()
	task := "/proc/self/task/" + strconv.Itoa(s.tid)
	tstest.WaitFor(t, 10*time.Second, "the starting thread to exit", func() bool {
		_, err := os.Stat(task)
		return os.IsNotExist(err)
	})
	// The signal, had there been one, was sent as the thread exited: a
	// child that answers now was not killed.
	if _, err := io.WriteString(s.p.Stdin(), "ping\n"); err != nil {
		t.Fatalf("the child is gone: %v", err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(pr, buf); err != nil || string(buf) != "ping\n" {
		st, _ := s.p.Wait()
		t.Fatalf("the child did not answer (%q, %v): %+v", buf, err, st)
	}
}
