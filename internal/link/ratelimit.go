package link

import (
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Machine-wide limits across every session, as the protocol's shim
// enforces them: past them a request is SHIM_OVERLOADED and nothing runs.
const (
	MaxCommandsPerMinute    = 60
	MaxConcurrentCommands   = 10
	MaxScreenshotsPerMinute = 10
)

// rateLimits counts commands and screenshots over a sliding minute, and
// running commands, for all sessions of one Service.
type rateLimits struct {
	now func() time.Time

	mu       sync.Mutex
	commands []time.Time // starts within the last minute, oldest first
	shots    []time.Time
	launches []time.Time // APP_LAUNCH (computer_more.go)
	running  int
}

func newRateLimits() *rateLimits { return &rateLimits{now: time.Now} }

// recent drops the entries older than a minute and returns the rest.
func recent(ts []time.Time, now time.Time) []time.Time {
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= time.Minute {
		i++
	}
	return ts[i:]
}

func overloaded(limit string, n int) error {
	return errcode.New(errcode.Overloaded, "the %s limit (%d) is reached; retry later", limit, n).With("limit", limit)
}

// startCommand admits one command; done must be called when it ends.
func (r *rateLimits) startCommand() (done func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.commands = recent(r.commands, now)
	switch {
	case r.running >= MaxConcurrentCommands:
		return nil, overloaded("concurrent_commands", MaxConcurrentCommands)
	case len(r.commands) >= MaxCommandsPerMinute:
		return nil, overloaded("commands_per_minute", MaxCommandsPerMinute)
	}
	r.commands = append(r.commands, now)
	r.running++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.running--
			r.mu.Unlock()
		})
	}, nil
}

// screenshot admits one screenshot.
func (r *rateLimits) screenshot() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.shots = recent(r.shots, now)
	if len(r.shots) >= MaxScreenshotsPerMinute {
		return overloaded("screenshots_per_minute", MaxScreenshotsPerMinute)
	}
	r.shots = append(r.shots, now)
	return nil
}
