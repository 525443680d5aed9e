package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// modelsTTL is how long a runtime's model list is kept.
const modelsTTL = 10 * time.Minute

// modelsEntry is one listing of a runtime's models, running or done.
type modelsEntry struct {
	done   chan struct{}
	models []agentapi.Model
	err    error
	at     time.Time
}

// reusable reports whether a finished listing answers a new call: a list,
// or the runtime's word that it has none, while fresh; never an error, so
// that one slow or failed start does not fail the calls after it.
func (m *modelsEntry) reusable() bool {
	select {
	case <-m.done:
		return (m.err == nil || m.err == ErrModelsUnsupported) && time.Since(m.at) < modelsTTL
	default:
		return true // still running: join it
	}
}

// Models lists a runtime's models where it can discover them. The listing
// runs on its own, for up to the start limit (listing may mean starting
// the CLI); the caller waits up to the models limit, and a caller that
// gives up leaves the listing running for the next call to take.
func (e *Engine) Models(ctx context.Context, name string) ([]agentapi.Model, error) {
	rt, err := e.runtime(name)
	if err != nil {
		return nil, err
	}
	// A runtime known not to work is refused as submit_agent_task
	// refuses it, with the same code and readiness.
	if rd := e.readiness(ctx, name, rt); !rd.Ready && known(rd) {
		return nil, notReady(name, rd, "")
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errcode.New(CodeRuntimeUnavailable, "hostlink is shutting down")
	}
	m := e.models[name]
	if m == nil || !m.reusable() {
		m = &modelsEntry{done: make(chan struct{})}
		e.models[name] = m
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			d := e.o.Limits.StartTimeout
			lctx, cancel := context.WithTimeout(e.ctx, d)
			defer cancel()
			m.models, m.err = rt.Models(lctx)
			if m.err != nil && errors.Is(lctx.Err(), context.DeadlineExceeded) {
				m.err = timeoutError(fmt.Sprintf("%s did not list its models within %s", name, d), StartTimeoutKey, d)
			}
			m.at = time.Now()
			close(m.done)
		}()
	}
	e.mu.Unlock()
	d := e.o.Limits.ModelsTimeout
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-m.done:
		return m.models, m.err
	case <-t.C:
		return nil, timeoutError(fmt.Sprintf("%s did not list its models within %s; the listing goes on, ask again", name, d), ModelsTimeoutKey, d)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// timeoutError is RUNTIME_TIMEOUT for limit key, which lasted d.
func timeoutError(msg, key string, d time.Duration) error {
	return errcode.New(CodeRuntimeTimeout, "%s (%s)", msg, key).With("limit", key).With("seconds", int(d/time.Second))
}
