package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// readyTTL is how long a positive readiness verdict is taken as current;
// an older one is still used while a fresh check runs beside it.
const readyTTL = time.Minute

// readyEntry is a runtime's newest readiness verdict.
type readyEntry struct {
	rd         agentapi.Readiness
	at         time.Time
	refreshing bool
}

// probe checks rt's readiness within the probe limit and records the
// verdict. A check the limit cut short is reported as still checking,
// naming the limit.
func (e *Engine) probe(ctx context.Context, name string, rt Runtime) agentapi.Readiness {
	d := e.o.Limits.ProbeTimeout
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	rd := rt.Probe(pctx)
	if errors.Is(pctx.Err(), context.DeadlineExceeded) {
		// Cut short: what it found is partial, the verdict unknown.
		rd.Checking = true
		rd.Reason = fmt.Sprintf("%s did not finish its readiness check within %s (%s)", name, d, ProbeTimeoutKey)
	}
	if known(rd) {
		e.mu.Lock()
		e.ready[name] = &readyEntry{rd: rd, at: time.Now()}
		e.mu.Unlock()
	}
	return rd
}

// readiness is what Submit knows of rt's readiness: a recent positive
// verdict as it is (refreshed beside the caller once it is old); otherwise
// a check now, so that a refusal is never based on an old verdict (the
// user may have logged in since).
func (e *Engine) readiness(ctx context.Context, name string, rt Runtime) agentapi.Readiness {
	e.mu.Lock()
	c := e.ready[name]
	if c != nil && c.rd.Ready {
		rd := c.rd
		if time.Since(c.at) > readyTTL && !c.refreshing && !e.closed {
			c.refreshing = true
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				e.probe(e.ctx, name, rt)
			}()
		}
		e.mu.Unlock()
		return rd
	}
	e.mu.Unlock()
	return e.probe(ctx, name, rt)
}

// checkReady refuses a task for a runtime known not to be able to run it.
func (e *Engine) checkReady(ctx context.Context, name string) error {
	rt, err := e.runtime(name)
	if err != nil {
		return err
	}
	rd := e.readiness(ctx, name, rt)
	if rd.Ready || !known(rd) {
		return nil
	}
	return notReady(name, rd, " (queue_if_not_ready submits anyway)")
}

// notReady is the error for a runtime whose readiness check says it
// cannot work, with hint after the reason.
func notReady(name string, rd agentapi.Readiness, hint string) error {
	why := rd.Reason
	if !rd.Installed && why == "" {
		why = "not installed"
	}
	return errcode.New(CodeRuntimeNotReady, "runtime %q is not ready: %s%s", name, why, hint).With("readiness", rd)
}
