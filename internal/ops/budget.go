package ops

import (
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Budget is an allowance that the operations naming it in their specs
// share: at most PerMinute calls start in any sliding minute and at most
// Concurrent run at once, machine-wide across every registry sharing the
// same Budgets. It binds callers whose transport is in Transports; a
// refused call is SHIM_OVERLOADED and nothing runs.
type Budget struct {
	Name       string // e.g. "commands": the limit is reported as commands_per_minute or concurrent_commands
	PerMinute  int    // 0: unbounded
	Concurrent int    // 0: unbounded
	Transports []audit.Transport
}

// binds reports whether the budget applies to c.
func (b *Budget) binds(c Caller) bool {
	if b == nil || c.Nested {
		return false
	}
	for _, t := range b.Transports {
		if t == c.Transport {
			return true
		}
	}
	return false
}

// Budgets counts the use of every Budget. Registries assembled for one
// daemon share one, so that the limits are the machine's, not a session's.
type Budgets struct {
	now func() time.Time

	mu   sync.Mutex
	uses map[*Budget]*use
}

type use struct {
	starts  []time.Time // within the last minute, oldest first
	running int
}

// NewBudgets returns empty counters.
func NewBudgets() *Budgets { return &Budgets{now: time.Now, uses: map[*Budget]*use{}} }

// take admits one call under b; release must be called when it ends.
func (bs *Budgets) take(b *Budget) (release func(), err error) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	u := bs.uses[b]
	if u == nil {
		u = &use{}
		bs.uses[b] = u
	}
	now := bs.now()
	i := 0
	for i < len(u.starts) && now.Sub(u.starts[i]) >= time.Minute {
		i++
	}
	u.starts = u.starts[i:]
	switch {
	case b.Concurrent > 0 && u.running >= b.Concurrent:
		return nil, overloaded("concurrent_"+b.Name, b.Concurrent)
	case b.PerMinute > 0 && len(u.starts) >= b.PerMinute:
		return nil, overloaded(b.Name+"_per_minute", b.PerMinute)
	}
	u.starts = append(u.starts, now)
	u.running++
	var once sync.Once
	return func() {
		once.Do(func() {
			bs.mu.Lock()
			u.running--
			bs.mu.Unlock()
		})
	}, nil
}

func overloaded(limit string, n int) error {
	return errcode.New(errcode.Overloaded, "the %s limit (%d) is reached; retry later", limit, n).With("limit", limit)
}
