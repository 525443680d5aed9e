//go:build linux || darwin

package procs

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestProbesBesideTrees starts hundreds of short-lived children from many
// goroutines, as agent runtimes' version probes do (through Start) and as
// other code might (os/exec), while tracked command trees with orphaned
// descendants start, run and end beside them. Every probe must end by its
// own exit, with its own status and output and no error: no tree may
// claim, kill or reap a child it did not start. Before the tracker
// registered children under its lock as they were forked, about half of
// the probes through Start failed here ("waitid: no child processes").
func TestProbesBesideTrees(t *testing.T) {
	const workers, probes = 8, 50 // 400 probes, half of them through Start
	stop := make(chan struct{})
	var trees sync.WaitGroup
	for i := range 3 {
		trees.Add(1)
		go func() {
			defer trees.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				dir := t.TempDir()
				p, err := Start(Spec{Argv: []string{self(t), dir + "/pid", "setsid", "leave"}, Dir: dir,
					Env: map[string]string{helperEnv: "spawn"}}, nil, nil)
				if err != nil {
					t.Error(err)
					return
				}
				waitForPid(dir+"/pid", 10*time.Second)
				if (i+n)%2 == 0 {
					p.Terminate(50 * time.Millisecond)
				}
				p.Wait()
			}
		}()
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range probes {
				code := (w + n) % 5
				script := fmt.Sprintf("printf out; printf err >&2; exit %d", code)
				if w%2 == 1 {
					// A child of hostlink's started by os/exec, outside this
					// package: it must be left to its own Wait too.
					var errb strings.Builder
					c := exec.Command("sh", "-c", script)
					c.Stderr = &errb
					out, err := c.Output()
					var ee *exec.ExitError
					if code == 0 && err != nil || code != 0 && (!errors.As(err, &ee) || ee.ExitCode() != code) ||
						string(out) != "out" || errb.String() != "err" {
						t.Errorf("exec probe %d/%d: %v, stdout %q, stderr %q", w, n, err, out, errb.String())
					}
					continue
				}
				var out, errb strings.Builder
				p, err := Start(Spec{Argv: []string{"sh", "-c", script}, Dir: t.TempDir()}, &out, &errb)
				if err != nil {
					t.Errorf("probe %d/%d: Start: %v", w, n, err)
					return
				}
				st, err := p.Wait()
				if err != nil || st.ExitCode != code || st.Signal != "" || st.Killed || out.String() != "out" || errb.String() != "err" {
					t.Errorf("probe %d/%d: state %+v, err %v, stdout %q, stderr %q", w, n, st, err, out.String(), errb.String())
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	trees.Wait()
}
