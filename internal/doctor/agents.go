package doctor

import (
	"context"
	"encoding/json"
	"os/exec"
	"time"

	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/ipc"
)

// checkAgents reports each allowed agent runtime: as the running daemon's
// engine probes it (list_agent_runtimes), else whether its CLI is on PATH.
func (e *env) checkAgents(ctx context.Context) {
	if !e.cfg.AgentsOn() {
		e.add("agents", OK, "off (enable with [agents] enabled = true and a workdir's agent_mode)", "")
		return
	}
	if res, err := e.daemonRuntimes(ctx); err == nil {
		for _, r := range res.Runtimes {
			name := "agent runtime " + r.Name
			switch {
			case r.Ready:
				e.add(name, OK, "ready "+r.Version, "")
			case !r.Allowed:
				e.add(name, OK, "not allowed by agents.runtimes", "")
			default:
				e.add(name, Warn, "not ready: "+r.Reason, "install and sign in to the "+r.Name+" CLI, or remove \""+r.Name+"\" from [agents] runtimes in "+e.configPath)
			}
		}
		return
	}
	for _, n := range e.cfg.Agents.Runtimes {
		if n == "fake" {
			continue
		}
		name := "agent runtime " + n
		if p, err := exec.LookPath(n); err == nil {
			e.add(name, OK, "CLI at "+p+" (a running daemon probes version and sign-in)", "")
		} else {
			e.add(name, Warn, "the "+n+" CLI is not on PATH", "install it, or remove \""+n+"\" from [agents] runtimes in "+e.configPath)
		}
	}
}

// daemonRuntimes asks the running daemon's agent engine, if there is one.
func (e *env) daemonRuntimes(ctx context.Context) (*agentapi.RuntimesResult, error) {
	if e.status == nil {
		return nil, context.Canceled
	}
	addr, err := ipc.Address(e.dirs.Runtime)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cl, err := ipc.Connect(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	raw, err := cl.Call(ctx, agentapi.OpListRuntimes, nil)
	if err != nil {
		return nil, err
	}
	var res agentapi.RuntimesResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
