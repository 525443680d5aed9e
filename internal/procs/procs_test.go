package procs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestEnvironmentScrubbed(t *testing.T) {
	t.Setenv("HOSTLINK_TEST_SECRET", "s3cret-value")
	t.Setenv("HOSTLINK_TOKEN", "token-value")
	shellEnv := "env"
	if runtime.GOOS == "windows" {
		shellEnv = "set"
	}
	tests := []struct {
		name string
		spec Spec
		mode string
	}{
		{"argv", Spec{Argv: []string{self(t)}}, "env"},
		{"shell", Spec{Command: shellEnv}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Env = map[string]string{"REQUEST_VAR": "from request"}
			out, _, _ := run(t, tt.spec, tt.mode)
			if strings.Contains(out, "s3cret-value") || strings.Contains(out, "token-value") {
				t.Errorf("hostlink's secret reached the child:\n%s", out)
			}
			vars := map[string]string{}
			for _, l := range lines(out) {
				k, v, _ := strings.Cut(l, "=")
				vars[strings.ToUpper(k)] = v
			}
			for _, k := range []string{"HOME", "USERPROFILE", "PATH"} {
				if vars[k] == "" {
					t.Errorf("%s not set in the child:\n%s", k, out)
				}
			}
			if vars["HOME"] != vars["USERPROFILE"] {
				t.Errorf("HOME %q != USERPROFILE %q", vars["HOME"], vars["USERPROFILE"])
			}
			if vars["PYTHONIOENCODING"] != "utf-8" || vars["REQUEST_VAR"] != "from request" {
				t.Errorf("PYTHONIOENCODING=%q REQUEST_VAR=%q", vars["PYTHONIOENCODING"], vars["REQUEST_VAR"])
			}
		})
	}
}

func TestStreamsAndExitCodes(t *testing.T) {
	for _, code := range []int{0, 1, 3, 42} {
		out, errOut, st := run(t, Spec{Argv: []string{self(t), itoa(code)}}, "streams")
		if out != "out" || errOut != "err" {
			t.Errorf("exit %d: stdout %q stderr %q, want out/err", code, out, errOut)
		}
		if st.ExitCode != code || st.Signal != "" || st.Killed {
			t.Errorf("exit %d: state %+v", code, st)
		}
		if st.Started.IsZero() || st.Ended.Before(st.Started) {
			t.Errorf("times %v .. %v", st.Started, st.Ended)
		}
	}
}

func TestStdin(t *testing.T) {
	var out strings.Builder
	p, err := Start(Spec{Argv: []string{self(t)}, Dir: t.TempDir(), Stdin: true,
		Env: map[string]string{helperEnv: "cat"}}, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := p.Stdin()
	for _, s := range []string{"hello ", "wörld\n"} {
		if _, err := io.WriteString(in, s); err != nil {
			t.Fatal(err)
		}
	}
	in.Close()
	st, err := p.Wait()
	if err != nil || st.ExitCode != 0 || out.String() != "hello wörld\n" {
		t.Fatalf("got %q, %+v, %v", out.String(), st, err)
	}

	// Without Stdin the child reads end of file at once.
	p, err = Start(Spec{Argv: []string{self(t)}, Dir: t.TempDir(),
		Env: map[string]string{helperEnv: "cat"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Stdin() != nil {
		t.Error("Stdin() != nil without Spec.Stdin")
	}
	done := make(chan struct{})
	go func() { p.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.Kill()
		t.Fatal("child without stdin did not see end of file")
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		spec Spec
		code errcode.Code
	}{
		{"neither", Spec{Dir: dir}, errcode.InvalidArgument},
		{"both", Spec{Argv: []string{"x"}, Command: "x", Dir: dir}, errcode.InvalidArgument},
		{"relative dir", Spec{Argv: []string{self(t)}, Dir: "rel"}, errcode.InvalidArgument},
		{"bad env", Spec{Argv: []string{self(t)}, Dir: dir, Env: map[string]string{"A=B": "c"}}, errcode.InvalidArgument},
		{"unknown shell", Spec{Command: "x", Shell: "fish", Dir: dir}, errcode.InvalidArgument},
		{"missing program", Spec{Argv: []string{"hostlink-no-such-program"}, Dir: dir}, CommandStartFailed},
		{"missing dir", Spec{Argv: []string{self(t)}, Dir: filepath.Join(dir, "gone")}, CommandStartFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start(tt.spec, nil, nil)
			if p != nil {
				p.Kill()
			}
			if got := errcode.CodeOf(err); got != tt.code {
				t.Errorf("code %q (%v), want %q", got, err, tt.code)
			}
		})
	}
	// A start the OS refuses for a reason of its own (here a file that is
	// no program) says that reason, never the paths the OS's error
	// carries beside it.
	t.Run("OS reason", func(t *testing.T) {
		bad := filepath.Join(dir, "bad")
		if runtime.GOOS == "windows" {
			bad += ".exe"
		}
		if err := os.WriteFile(bad, []byte("no program\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := Start(Spec{Argv: []string{bad}, Dir: dir}, nil, nil)
		if p != nil {
			p.Kill()
			t.Fatal("a file that is no program started")
		}
		msg := errcode.As(err).Message
		reason, ok := strings.CutPrefix(msg, fmt.Sprintf("cannot start %q: ", bad))
		if errcode.CodeOf(err) != CommandStartFailed || !ok || strings.TrimSpace(reason) == "" ||
			strings.Contains(reason, dir) || strings.Contains(reason, "%1") {
			t.Fatalf("error %v, want %s with the OS's reason and no path", err, CommandStartFailed)
		}
		t.Logf("reason: %s", reason)
	})
}

// failWriter fails after its first write; the child must still finish.
type failWriter struct{ n atomic.Int32 }

func (w *failWriter) Write(b []byte) (int, error) {
	if w.n.Add(1) > 1 {
		return 0, errors.New("disk full")
	}
	return len(b), nil
}

func TestWriterFailureDrains(t *testing.T) {
	p, err := Start(Spec{Argv: []string{self(t), itoa(4 << 20)}, Dir: t.TempDir(),
		Env: map[string]string{helperEnv: "flood"}}, &failWriter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Wait()
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Wait error %v, want the writer's", err)
	}
	if st.ExitCode != 0 {
		t.Errorf("child did not finish writing: %+v", st)
	}
}

// gate is a writer that blocks until opened, then counts.
type gate struct {
	open  chan struct{}
	bytes atomic.Int64
}

func (g *gate) Write(b []byte) (int, error) {
	<-g.open
	g.bytes.Add(int64(len(b)))
	time.Sleep(100 * time.Microsecond)
	return len(b), nil
}

// TestBackpressure: a child writing 64 MiB into a writer that blocks is
// held by the full pipe, and hostlink's memory does not grow.
func TestBackpressure(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	const total = 64 << 20
	g := &gate{open: make(chan struct{})}
	p, err := Start(Spec{Argv: []string{self(t), itoa(total)}, Dir: t.TempDir(),
		Env: map[string]string{helperEnv: "flood"}}, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
		t.Fatal("the child finished 64 MiB while its writer was blocked")
	case <-time.After(500 * time.Millisecond):
	}
	// Measured once everything is started and the first write is
	// blocked: what follows is the 64 MiB flowing through.
	rss0 := rss()
	close(g.open)
	stop, peakc := make(chan struct{}), make(chan int64)
	go func() {
		peak := rss()
		for {
			select {
			case <-stop:
				peakc <- peak
				return
			case <-time.After(20 * time.Millisecond):
				peak = max(peak, rss())
			}
		}
	}()
	st, err := p.Wait()
	close(stop)
	peak := <-peakc
	if err != nil || st.ExitCode != 0 || g.bytes.Load() != total {
		t.Fatalf("state %+v err %v bytes %d", st, err, g.bytes.Load())
	}
	if rss0 > 0 {
		t.Logf("RSS before %d KiB, peak %d KiB", rss0>>10, peak>>10)
		// Garbage from scans and copies until the next GC, not output: 64
		// MiB buffered anywhere would exceed either bound many times over.
		limit := int64(8 << 20)
		if raceEnabled {
			limit = 24 << 20
		}
		if peak-rss0 > limit {
			t.Errorf("RSS grew by %d KiB moving 64 MiB", (peak-rss0)>>10)
		}
	}
}

// TestTerminateTree: Terminate ends grandchildren that ignore the graceful
// signal, that leave the process group (setsid) while their parent lives,
// and that are orphaned by a double fork before any scan saw them.
func TestTerminateTree(t *testing.T) {
	tests := []struct {
		name string
		args []string
		unix bool
	}{
		{"grandchild", nil, false},
		{"ignores graceful signal", []string{"ignore-term"}, false},
		{"setsid ignoring SIGTERM", []string{"setsid", "ignore-term"}, true},
		{"double fork setsid", []string{"setsid", "ignore-term", "leave"}, true},
		{"orphaned grandchild", []string{"ignore-term", "leave"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unix && runtime.GOOS == "windows" {
				t.Skip("setsid is Unix")
			}
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "grandchild.pid")
			p, err := Start(Spec{Argv: append([]string{self(t), pidfile}, tt.args...), Dir: dir,
				Env: map[string]string{helperEnv: "spawn"}}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			gc := waitForPid(pidfile, 20*time.Second)
			if gc == 0 {
				p.Kill()
				t.Fatal("no grandchild pid")
			}
			if slices.Contains(tt.args, "leave") {
				// Let the main process exit first: the grandchild is then an
				// orphan and Wait alone must end it.
				st, _ := p.Wait()
				if st.Killed {
					t.Errorf("state %+v", st)
				}
			} else {
				const grace = 300 * time.Millisecond
				t0 := time.Now()
				p.Terminate(grace)
				if d := time.Since(t0); slices.Contains(tt.args, "ignore-term") && d < grace {
					t.Errorf("Terminate returned after %v, before the grace of %v", d, grace)
				}
				st, _ := p.Wait()
				if !st.Killed {
					t.Errorf("state %+v, want Killed", st)
				}
				p.Terminate(grace) // idempotent
			}
			if !gone(t, gc, 3*time.Second) {
				t.Errorf("grandchild %d survived", gc)
			}
		})
	}
}

// TestNothingOutlivesHostlink: a tree started through Start (a child and
// its grandchild) is gone once the hostlink that started it is gone:
// stopped with KillAll, exited without it, or killed with SIGKILL
// (TerminateProcess on Windows), and on Unix also when its guardian is
// killed with it, by the next hostlink's UseLedger. Each runs in a helper
// process, since KillAll also stops this package from starting more. The
// control, the same tree started with os/exec, survives its parent's
// SIGKILL: what ends the others is this package (the parent-death signal,
// the guardian, the Job Object), not the OS or Wine on its own.
func TestNothingOutlivesHostlink(t *testing.T) {
	tests := []struct {
		name         string
		mode         string   // the helper's: killall, exit, hang or outside (both to be killed)
		spawn        []string // the child's arguments
		killGuardian bool     // kill the guardian too; the next hostlink ends the tree
		unix         bool
		survives     bool // the control: the grandchild must outlive its hostlink
	}{
		{"KillAll", "killall", nil, false, false, false},
		{"exit", "exit", nil, false, false, false},
		{"SIGKILL", "hang", nil, false, false, false},
		{"SIGKILL, grandchild ignoring SIGTERM", "hang", []string{"ignore-term"}, false, false, false},
		{"SIGKILL, grandchild in its own session", "hang", []string{"setsid"}, false, true, false},
		{"SIGKILL, guardian too", "hang", nil, true, true, false},
		{"SIGKILL, guardian too, grandchild in its own session", "hang", []string{"setsid"}, true, true, false},
		{"control: started with os/exec, SIGKILL", "outside", nil, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unix && runtime.GOOS == "windows" {
				t.Skip("Unix")
			}
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "grandchild.pid")
			ledger := filepath.Join(dir, "ledger")
			c := exec.Command(self(t), append([]string{pidfile, tt.mode, ledger}, tt.spawn...)...)
			c.Env = append(os.Environ(), helperEnv+"=killall")
			var errb strings.Builder
			c.Stderr = &errb
			out, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Process.Kill() })
			if tt.mode == "hang" || tt.mode == "outside" {
				var guardian int
				if _, err := fmt.Fscan(out, &guardian); err != nil {
					c.Process.Kill()
					c.Wait()
					t.Fatalf("helper: %v %s", err, errb.String())
				}
				if tt.killGuardian {
					if guardian == 0 {
						t.Fatal("no guardian")
					}
					killPid(guardian)
				}
				c.Process.Kill()
			}
			io.Copy(io.Discard, out)
			if err := c.Wait(); err != nil && (tt.mode == "killall" || tt.mode == "exit") {
				t.Fatalf("%v: %s", err, errb.String())
			}
			gc := waitForPid(pidfile, time.Second)
			if gc == 0 {
				t.Fatal("no grandchild pid")
			}
			if tt.killGuardian {
				n, err := UseLedger(ledger)
				if err != nil || n == 0 {
					t.Errorf("the next hostlink's UseLedger ended %d processes, %v", n, err)
				}
			}
			if tt.survives {
				if gone(t, gc, time.Second) {
					t.Errorf("grandchild %d of a tree started outside this package died with its parent: the test cannot tell", gc)
				}
				killPid(gc)
				return
			}
			if !gone(t, gc, 3*time.Second) {
				t.Errorf("grandchild %d survived its hostlink", gc)
				killPid(gc)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// rss returns hostlink's resident set size where the OS reports it
// (Linux), else the memory the Go runtime holds from the OS.
func rss() int64 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range lines(string(b)) {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				return kb << 10
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.Sys)
}

// TestConcurrentStarts: starts from several goroutines at once, half of
// them killed while running, each start and end its own (on Windows each
// joins its own job before it runs).
func TestConcurrentStarts(t *testing.T) {
	const workers, each = 4, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				dir := t.TempDir()
				sleeper := (w+i)%2 == 0
				args, mode := []string{"3"}, "streams"
				if sleeper {
					args, mode = []string{filepath.Join(dir, "pid")}, "sleep"
				}
				var out, errb strings.Builder
				p, err := Start(Spec{Argv: append([]string{self(t)}, args...), Dir: dir,
					Env: map[string]string{helperEnv: mode}}, &out, &errb)
				if err != nil {
					t.Errorf("worker %d start %d: %v", w, i, err)
					return
				}
				if sleeper {
					p.Kill()
				}
				st, err := p.Wait()
				switch {
				case err != nil:
					t.Errorf("worker %d start %d: wait: %v", w, i, err)
				case !sleeper && (st.ExitCode != 3 || out.String() != "out" || errb.String() != "err"):
					t.Errorf("worker %d start %d: exit %d, stdout %q, stderr %q", w, i, st.ExitCode, out.String(), errb.String())
				case sleeper && st.ExitCode == 0:
					t.Errorf("worker %d start %d: killed, yet exit 0", w, i)
				}
			}
		})
	}
	wg.Wait()
}
