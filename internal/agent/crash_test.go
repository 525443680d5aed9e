package agent_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/lease"
)

// crashTurn is the helper's turn: it streams, writes in the workdir
// (holding its writer lease) and works a little.
const crashTurn = "items 3\nwrite f.txt x\nsay step\nsleep 10\nresult ok"

// crashHelper is a hostlink engine in a child process: it runs writer
// tasks one after another in workdir a, printing the newest committed
// event of each as it sees it, until it is killed.
func crashHelper(base string) int {
	w := worldAt(base)
	fs, _, err := filesFor(w)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	eng, err := agent.Open(engineOptions(w, fs))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fs.SetGuard(eng.Leases())
	fmt.Println("ready")
	for {
		t, _, err := eng.Submit(context.Background(), agentapi.SubmitArgs{Runtime: "fake", Workdir: "a", Prompt: crashTurn, Access: "workspace-write"})
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		var last int64
		for {
			got, err := eng.Store().Get(t.ID)
			if err != nil {
				fmt.Println("error", err)
				return 1
			}
			if got.LastSeq != last {
				last = got.LastSeq
				fmt.Println("seen", t.ID, last)
			}
			if got.Status.Terminal() {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestKill9Loop kills an engine process with SIGKILL (TerminateProcess on
// Windows) at random points of its turns, again and again, and after each
// kill opens the state as a restarted hostlink would: the store opens,
// every event the dead process had committed is there in order, every task
// is terminal (reconciled), and a workdir whose writer died mid-turn
// reports WORKDIR_RECOVERY_REQUIRED until it is recovered.
func TestKill9Loop(t *testing.T) {
	iterations := 50
	if testing.Short() {
		iterations = 10
	}
	w := newWorld(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	recovered, tasks := 0, 0
	seen := map[string]int64{}
	for i := range iterations {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "HOSTLINK_AGENT_CRASH_HELPER="+w.base, "GORACE=atexit_sleep_ms=0")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		started := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		if !lines.Scan() || lines.Text() != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("iteration %d: helper said %q", i, lines.Text())
		}
		collected := make(chan map[string]int64)
		working := make(chan struct{}) // the helper has a task
		go func() {
			m := map[string]int64{}
			for lines.Scan() {
				f := strings.Fields(lines.Text())
				if len(f) == 3 && f[0] == "seen" {
					n, _ := strconv.ParseInt(f[2], 10, 64)
					if len(m) == 0 {
						close(working)
					}
					m[f[1]] = n
				} else {
					t.Errorf("helper: %s", lines.Text())
				}
			}
			if len(m) == 0 {
				close(working)
			}
			collected <- m
		}()
		// A random point of its work, counted from its first task rather
		// than its start, so that a slow machine does not move every kill
		// before the first turn.
		<-working
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		killOrphans(cmd.Process.Pid, started)
		for id, n := range <-collected {
			seen[id] = n
		}
		recovered += checkAfterCrash(t, w, i, seen)
	}
	tasks = len(seen)
	t.Logf("%d kills, %d tasks, %d times a workdir needed recovery", iterations, tasks, recovered)
	if recovered < iterations/5 {
		t.Fatalf("the kills never landed mid-turn (%d tasks, %d recoveries): the test proves nothing", tasks, recovered)
	}
}

// checkAfterCrash opens the engine over w as a restart would, checks the
// invariants, and recovers workdir a if needed. It reports 1 if it had to.
func checkAfterCrash(t *testing.T, w world, i int, seen map[string]int64) int {
	t.Helper()
	fs := openFiles(t, w)
	eng, err := agent.Open(engineOptions(w, fs))
	if err != nil {
		t.Fatalf("iteration %d: the engine does not open after a kill: %v", i, err)
	}
	defer eng.Close()
	st := eng.Store()
	if left, err := st.Unfinished(); err != nil || len(left) > 0 {
		t.Fatalf("iteration %d: unfinished tasks after recovery: %v %v", i, left, err)
	}
	for id, n := range seen {
		task, err := st.Get(id)
		if err != nil {
			t.Fatalf("iteration %d: task %s the dead process committed is gone: %v", i, id, err)
		}
		evs, err := st.Events(id, 0, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(evs)) != task.LastSeq || task.LastSeq < n {
			t.Fatalf("iteration %d: task %s has %d events, last_seq %d, the dead process saw %d", i, id, len(evs), task.LastSeq, n)
		}
		for j, ev := range evs {
			if ev.Seq != int64(j+1) {
				t.Fatalf("iteration %d: task %s event %d has seq %d", i, id, j, ev.Seq)
			}
		}
		if evs[0].Type != "task.queued" || !task.Status.Terminal() {
			t.Fatalf("iteration %d: task %s: first event %s, status %s", i, id, evs[0].Type, task.Status)
		}
	}
	leases := eng.Leases()
	orphans, err := leases.Orphans()
	if err != nil {
		t.Fatal(err)
	}
	if len(orphans) == 0 {
		release, err := leases.Mutation("a")
		if err != nil {
			t.Fatalf("iteration %d: no guard, yet mutations in a fail: %v", i, err)
		}
		release()
		return 0
	}
	g := orphans[0]
	task, err := st.Get(g.TaskID)
	if err != nil || task.Status != agent.Interrupted && task.Status != agent.Completed {
		t.Fatalf("iteration %d: the guard's task %s is %v (%v)", i, g.TaskID, task.Status, err)
	}
	if g.Reconciled == "" {
		t.Errorf("iteration %d: recovery did not mark the guard", i)
	}
	for range 2 { // it stays required, restart or not, until recovered
		if _, err := leases.Mutation("a"); errcode.CodeOf(err) != lease.CodeRecoveryRequired {
			t.Fatalf("iteration %d: a mutation beside a dead writer's guard: %v", i, err)
		}
	}
	if _, _, err := eng.Submit(context.Background(), agentapi.SubmitArgs{Runtime: "fake", Workdir: "a", Prompt: "x", Access: "workspace-write"}); errcode.CodeOf(err) != lease.CodeRecoveryRequired {
		t.Fatalf("iteration %d: a writer task beside a dead writer's guard: %v", i, err)
	}
	if _, err := eng.Recover("a"); err != nil {
		t.Fatal(err)
	}
	release, err := leases.Mutation("a")
	if err != nil {
		t.Fatalf("iteration %d: after recovery: %v", i, err)
	}
	release()
	return 1
}
