package lease

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestMain doubles as the helper process of the cross-process tests: with
// HOSTLINK_LEASE_HELPER set it takes a lease, says so, and holds it until
// killed.
func TestMain(m *testing.M) {
	if spec := os.Getenv("HOSTLINK_LEASE_HELPER"); spec != "" {
		os.Exit(helper(spec))
	}
	writerWait = 200 * time.Millisecond
	os.Exit(m.Run())
}

// helper runs "lock PATH" (exclusive lock) or "writer DIR ALIAS TASK"
// (writer lease with guard), then blocks.
func helper(spec string) int {
	f := strings.Fields(spec)
	switch f[0] {
	case "lock":
		if _, err := TryLock(f[1], Exclusive); err != nil {
			fmt.Println("error", err)
			return 1
		}
	case "writer":
		w, err := OpenWorkdirs(f[1])
		if err == nil {
			_, err = w.Writer(f[2], Guard{TaskID: f[3], PID: os.Getpid()})
		}
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
	fmt.Println("held")
	time.Sleep(time.Hour)
	return 0
}

// holdInOtherProcess starts the helper and waits until it holds its lease.
func holdInOtherProcess(t *testing.T, spec string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HOSTLINK_LEASE_HELPER="+spec)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "held" {
		t.Fatalf("helper: %q %v", line, err)
	}
	return cmd
}

func TestLockModes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	ex, err := TryLock(p, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Mode{Shared, Exclusive} {
		if _, err := TryLock(p, m); !errors.Is(err, ErrBusy) {
			t.Fatalf("mode %d beside an exclusive lock in this process: %v", m, err)
		}
	}
	ex.Release()
	ex.Release() // a second release is harmless
	s1, err := TryLock(p, Shared)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := TryLock(p, Shared)
	if err != nil {
		t.Fatalf("two shared locks: %v", err)
	}
	if _, err := TryLock(p, Exclusive); !errors.Is(err, ErrBusy) {
		t.Fatalf("exclusive beside shared: %v", err)
	}
	s1.Release()
	s2.Release()
	ex, err = TryLock(p, Exclusive)
	if err != nil {
		t.Fatalf("exclusive after every release: %v", err)
	}
	ex.Release()
}

func TestLockCrossProcess(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	cmd := holdInOtherProcess(t, "lock "+p)
	for _, m := range []Mode{Shared, Exclusive} {
		if _, err := TryLock(p, m); !errors.Is(err, ErrBusy) {
			t.Fatalf("mode %d while another process holds the lock: %v", m, err)
		}
	}
	// The OS releases the lock when its holder dies, however it dies.
	cmd.Process.Kill()
	cmd.Wait()
	l, err := TryLock(p, Exclusive)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Release()
}

func TestWriterAndMutations(t *testing.T) {
	w, err := OpenWorkdirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wr, err := w.Writer("a", Guard{TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Mutation("a"); errcode.CodeOf(err) != CodeBusy {
		t.Fatalf("mutation in a during a writer's turn: %v", err)
	}
	rel, err := w.Mutation("b")
	if err != nil {
		t.Fatalf("mutation in b: %v", err)
	}
	// Mutations share the lease with each other.
	rel2, err := w.Mutation("b")
	if err != nil {
		t.Fatalf("second mutation in b: %v", err)
	}
	rel()
	rel2()
	if st, _ := w.Check("a"); !st.Busy {
		t.Fatalf("check a: %+v", st)
	}
	if _, err := w.Clear("a"); errcode.CodeOf(err) != CodeBusy {
		t.Fatalf("clear during a live lease: %v", err)
	}
	if err := wr.Release(); err != nil {
		t.Fatal(err)
	}
	rel, err = w.Mutation("a")
	if err != nil {
		t.Fatalf("mutation after the turn: %v", err)
	}
	rel()
}

func TestDeadWriterRequiresRecovery(t *testing.T) {
	dir := t.TempDir()
	cmd := holdInOtherProcess(t, "writer "+dir+" a t1")
	w, err := OpenWorkdirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A live lease takes precedence over its guard.
	if _, err := w.Mutation("a"); errcode.CodeOf(err) != CodeBusy {
		t.Fatalf("mutation while the other process writes: %v", err)
	}
	if _, err := w.Writer("a", Guard{TaskID: "t2"}); errcode.CodeOf(err) != CodeBusy {
		t.Fatalf("second writer across processes: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := w.Mutation("a"); errcode.CodeOf(err) != CodeRecoveryRequired {
		t.Fatalf("mutation after the writer died: %v", err)
	}
	if _, err := w.Writer("a", Guard{TaskID: "t2"}); errcode.CodeOf(err) != CodeRecoveryRequired {
		t.Fatalf("another task's writer after the writer died: %v", err)
	}
	orphans, err := w.Orphans()
	if err != nil || len(orphans) != 1 || orphans[0].TaskID != "t1" || orphans[0].Alias != "a" {
		t.Fatalf("orphans: %+v %v", orphans, err)
	}
	if err := w.Mark("a", "interrupted"); err != nil {
		t.Fatal(err)
	}
	if g, _ := w.Guard("a"); g == nil || g.Reconciled != "interrupted" {
		t.Fatalf("marked guard: %+v", g)
	}
	// The same task may take its guard over (a resumed turn).
	wr, err := w.Writer("a", Guard{TaskID: "t1"})
	if err != nil {
		t.Fatalf("resumed writer: %v", err)
	}
	wr.lock.Release() // dies again, leaving its guard
	g, err := w.Clear("a")
	if err != nil || g == nil || g.TaskID != "t1" {
		t.Fatalf("clear: %+v %v", g, err)
	}
	rel, err := w.Mutation("a")
	if err != nil {
		t.Fatalf("mutation after recovery: %v", err)
	}
	rel()
	if g, err := w.Clear("a"); g != nil || err != nil {
		t.Fatalf("clearing nothing: %+v %v", g, err)
	}
}
