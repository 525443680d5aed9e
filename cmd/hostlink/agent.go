package main

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/lease"
	"github.com/hostlink/hostlink/internal/paths"
)

type agentCmd struct {
	Recover agentRecoverCmd `cmd:"" help:"Clear a workdir's WORKDIR_RECOVERY_REQUIRED after an agent task died mid-turn there (review the workdir first)."`
}

type agentRecoverCmd struct {
	Alias string `arg:"" help:"Workdir alias."`
}

// aliasRE is compiled when agent recover runs, not at every start of the
// CLI (its counted repetition makes a large program).
var aliasRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })

// Run removes the workdir's active-task guard. It refuses while a live
// agent turn holds the workdir's lease (WORKDIR_BUSY), in this or any
// other hostlink process; the task itself is reconciled by the engine.
func (r *agentRecoverCmd) Run() error {
	if !aliasRE().MatchString(r.Alias) {
		return fmt.Errorf("%q is not a workdir alias", r.Alias)
	}
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	w, err := lease.OpenWorkdirs(agent.LeaseDir(daemon.AgentsDir(dirs.State)))
	if err != nil {
		return err
	}
	g, err := w.Clear(r.Alias)
	if err != nil {
		return err
	}
	if g == nil {
		fmt.Printf("workdir %s needs no recovery\n", r.Alias)
		return nil
	}
	fmt.Printf("workdir %s recovered: cleared the guard of task %s (pid %d, started %s)", r.Alias, g.TaskID, g.PID, g.Started.Format("2006-01-02 15:04:05Z07:00"))
	if g.Reconciled != "" {
		fmt.Printf("; the task was reconciled as %s", g.Reconciled)
	}
	fmt.Println()
	return nil
}
