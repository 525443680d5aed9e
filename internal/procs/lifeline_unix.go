//go:build linux || darwin

package procs

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/private"
)

// What outlives hostlink on Unix. A command's process group and the
// descendants seen outside it are hostlink's to end, even when hostlink is
// killed with SIGKILL and cannot end anything:
//
//   - On Linux the parent-death signal kills every direct child at once
//     (spawn_linux.go). Its descendants are left, reparented to init.
//   - The guardian, a copy of hostlink started with the first command
//     (see guardian_unix.go), holds the read end of a pipe whose only write
//     end is hostlink's, and is told every group and outside descendant as
//     they appear and end. When hostlink dies, however it dies, the kernel
//     closes that pipe; the guardian reads end of file, kills everything it
//     was told of that is still the same process (pid and start time), and
//     exits.
//   - The ledger (see UseLedger) holds the same records in a file, for the
//     day both hostlink and its guardian are killed (`pkill -9 hostlink`
//     kills both): the next hostlink to start ends what it lists before it
//     reconciles its agent tasks.
//
// Records are lines of text, the same for the guardian and the ledger:
//
//	g PID START        a command's process group: its leader's pid and start time
//	d LEADER PID START a descendant of group LEADER seen outside the group
//	e LEADER           the group's tree has ended
var life lifeline

type lifeline struct {
	mu     sync.Mutex
	t      table
	guard  *guardian // nil when none runs (yet, or it died)
	failed bool      // a guardian could not be started; said once
	ledger *os.File  // nil without UseLedger
	path   string
	size   int64
}

// group is a recorded process group.
type group struct {
	start uint64
	desc  map[int]uint64 // pid → start time
}

// table is the set of live records.
type table map[int]*group

// apply updates t with one record; malformed records are ignored. Every
// pid must be above 1: kill(-0) and kill(-1) would reach hostlink's own
// group and every process of the user.
func (t table) apply(line string) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return
	}
	n := make([]uint64, len(f))
	for i := 1; i < len(f); i++ {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return
		}
		n[i] = v
	}
	pid := func(i int) (int, bool) { return int(n[i]), n[i] > 1 && n[i] <= math.MaxInt32 }
	leader, ok := pid(1)
	if !ok {
		return
	}
	switch {
	case len(f) == 3 && f[0] == "g":
		t[leader] = &group{start: n[2], desc: map[int]uint64{}}
	case len(f) == 4 && f[0] == "d":
		if p, ok := pid(2); ok && t[leader] != nil {
			t[leader].desc[p] = n[3]
		}
	case len(f) == 2 && f[0] == "e":
		delete(t, leader)
	}
}

// records returns the records that rebuild t.
func (t table) records() []string {
	var out []string
	for _, leader := range slices.Sorted(mapKeys(t)) {
		g := t[leader]
		out = append(out, fmt.Sprintf("g %d %d", leader, g.start))
		for _, pid := range slices.Sorted(mapKeys(g.desc)) {
			out = append(out, fmt.Sprintf("d %d %d %d", leader, pid, g.desc[pid]))
		}
	}
	return out
}

func mapKeys[V any](m map[int]V) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func readTable(r io.Reader) table {
	t := table{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		t.apply(sc.Text())
	}
	return t
}

// record applies a record and hands it to the guardian (started, or
// started again, as needed) and the ledger.
func (l *lifeline) record(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.t == nil {
		l.t = table{}
	}
	l.t.apply(line)
	if l.guard == nil || l.guard.send(line) != nil {
		l.startGuardian()
	}
	l.writeLedger(line)
}

func (l *lifeline) addGroup(leader int, start uint64) { l.record("g %d %d", leader, start) }
func (l *lifeline) endGroup(leader int)               { l.record("e %d", leader) }
func (l *lifeline) addDesc(leader, pid int, start uint64) {
	l.record("d %d %d %d", leader, pid, start)
}

// startGuardian starts a guardian and tells it every live record. l.mu is
// held.
func (l *lifeline) startGuardian() {
	if l.guard != nil {
		l.guard.close()
		l.guard = nil
	}
	g, err := startGuardian()
	if err == nil {
		for _, rec := range l.t.records() {
			if err = g.send(rec); err != nil {
				break
			}
		}
	}
	if err != nil {
		if g != nil {
			g.close()
		}
		if !l.failed {
			l.failed = true
			slog.Warn("procs: no guardian: commands may outlive hostlink if it is killed", "err", err)
		}
		return
	}
	l.guard = g
	go func() {
		g.wait()
		l.mu.Lock()
		if l.guard == g {
			l.guard = nil // the next record starts another
		}
		l.mu.Unlock()
		g.close()
	}()
}

// ledgerCompactAt is the ledger's size at which it is rewritten with only
// its live records.
const ledgerCompactAt = 1 << 20

func (l *lifeline) writeLedger(line string) {
	if l.ledger == nil {
		return
	}
	if l.size > ledgerCompactAt {
		l.compactLedger()
	}
	n, err := l.ledger.WriteString(line + "\n")
	l.size += int64(n)
	if err != nil {
		slog.Warn("procs: writing the process ledger", "err", err)
	}
}

func (l *lifeline) compactLedger() {
	recs := strings.Join(l.t.records(), "\n")
	if recs != "" {
		recs += "\n"
	}
	if err := private.WriteFile(l.path, []byte(recs)); err != nil {
		return
	}
	f, err := private.OpenFile(l.path, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return
	}
	l.ledger.Close()
	l.ledger, l.size = f, int64(len(recs))
}

// closeLedger removes the ledger if nothing is left running (hostlink is
// exiting after KillAll).
func (l *lifeline) closeLedger() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ledger == nil || len(l.t) > 0 {
		return
	}
	l.ledger.Close()
	os.Remove(l.path)
	l.ledger = nil
}

// UseLedger makes this hostlink record the process trees it starts in
// dir, created private if missing, and first ends every process that dead
// hostlink processes recorded there and left running (each still the same
// process: pid and start time). hostlink calls it once at start, before it
// reconciles anything, so that no runtime or command of a previous life is
// still working when recovery reports. It returns the number of processes
// it ended.
func UseLedger(dir string) (int, error) {
	if err := private.MkdirAll(dir); err != nil {
		return 0, err
	}
	self, ok := readProc(os.Getpid())
	if !ok {
		return 0, fmt.Errorf("procs: cannot read this process's start time")
	}
	own := fmt.Sprintf("%d-%d.ledger", os.Getpid(), self.start)
	ended, err := sweepLedgers(dir, own)
	if err != nil {
		return ended, err
	}
	path := filepath.Join(dir, own)
	f, err := private.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return ended, err
	}
	life.mu.Lock()
	defer life.mu.Unlock()
	if life.ledger != nil && life.path != path {
		// Moved: the live records go to the new ledger, below.
		life.ledger.Close()
		os.Remove(life.path)
	} else if life.ledger != nil {
		life.ledger.Close()
	}
	life.ledger, life.path, life.size = f, path, 0
	if life.t == nil {
		life.t = table{}
	}
	for _, rec := range life.t.records() {
		life.writeLedger(rec)
	}
	return ended, nil
}

// sweepLedgers ends what the ledgers of dead owners in dir list, and
// removes them.
func sweepLedgers(dir, own string) (int, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.ledger"))
	if err != nil {
		return 0, err
	}
	ended := 0
	for _, name := range names {
		base := filepath.Base(name)
		if base == own {
			continue
		}
		var pid int
		var start uint64
		if _, err := fmt.Sscanf(base, "%d-%d.ledger", &pid, &start); err != nil {
			continue
		}
		if info, ok := readProc(pid); ok && info.start == start && !info.zombie {
			continue // its hostlink still runs
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		t := readTable(io.LimitReader(f, 16<<20))
		f.Close()
		ended += endTable(t)
		os.Remove(name)
	}
	return ended, nil
}

// endTable SIGKILLs every process t records that is still the process
// recorded, again until none is left (a process forked meanwhile is
// caught by the next round), for at most two seconds, and returns how
// many processes it killed.
//
// A group is killed through its id only while its leader's pid does not
// name another process: a pid stays taken while any process is in the
// group it leads, so a leader's pid taken by another process means the
// group is empty and its id may be someone else's.
func endTable(t table) int {
	killed := map[int]bool{}
	for range 200 {
		procs, err := listProcs()
		if err != nil {
			break
		}
		left := false
		for leader, g := range t {
			if info, ok := procs[leader]; !ok || info.start == g.start {
				members := false
				for pid, info := range procs {
					if info.pgid == leader && !info.zombie {
						members = true
						killed[pid] = true
					}
				}
				if members {
					unix.Kill(-leader, unix.SIGKILL)
					left = true
				}
			}
			for pid, start := range g.desc {
				if info, ok := procs[pid]; ok && info.start == start && !info.zombie {
					unix.Kill(pid, unix.SIGKILL)
					killed[pid] = true
					left = true
				}
			}
		}
		if !left {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return len(killed)
}

// guardian is a running guardian process and the write end of its pipe.
type guardian struct {
	cmd *exec.Cmd
	w   *os.File
}

func (g *guardian) send(line string) error {
	_, err := g.w.WriteString(line + "\n")
	return err
}

func (g *guardian) close() { g.w.Close() }

// wait reaps the guardian: it was started here, so it is waited for here.
func (g *guardian) wait() {
	g.cmd.Wait()
	tracker.forgetOwned(g.cmd.Process.Pid)
}

// guardianEnv marks a process started as hostlink's guardian.
const guardianEnv = "HOSTLINK_PROCS_GUARDIAN"

// startGuardian starts this program again as the guardian, in its own
// process group (a terminal's ^C to hostlink's group must not reach it
// before it has done its work) and without the parent-death signal (it
// works once its parent is dead).
func startGuardian() (*guardian, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{Path: exe, Args: []string{"hostlink-guardian"}, Dir: "/", Env: []string{guardianEnv + "=1"}, Stdin: r,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	err = tracker.startOwned(cmd)
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	return &guardian{cmd: cmd, w: w}, nil
}

func init() {
	if os.Getenv(guardianEnv) == "1" {
		os.Exit(guardianMain(os.Stdin))
	}
}

// guardianMain is the guardian: it reads records until end of file, which
// comes when hostlink has exited, then ends what is left.
func guardianMain(in io.Reader) int {
	// Only the end of its input ends it: hostlink's signals (^C, a
	// service manager's SIGTERM) are for hostlink.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTSTP, syscall.SIGPIPE)
	t := readTable(in)
	endTable(t)
	return 0
}

func afterKillAll() { life.closeLedger() }
