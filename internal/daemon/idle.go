package daemon

import (
	"net/http"
	"sync"
	"time"
)

// DefaultIdleExit is how long a daemon that `hostlink mcp` started in the
// background waits with no client before it stops: long enough that an MCP
// client restarting its servers, or a user answering an approval from the
// CLI, finds it still running; short enough that a daemon nobody asked for
// does not stay for the session. A daemon started by hand or by the
// service manager has no idle exit.
const DefaultIdleExit = 10 * time.Minute

// idleWatch fires once nothing has used the daemon for a period: no open
// control-channel connection (every MCP stdio session holds one), no HTTP
// request in progress, and no running command or agent task.
type idleWatch struct {
	period time.Duration
	busy   func() bool // running work that keeps the daemon up

	mu     sync.Mutex
	active int
	timer  *time.Timer
	fired  chan struct{}
	once   sync.Once
}

// newIdleWatch returns a watch that closes Fired after period idle; a
// period of zero never fires.
func newIdleWatch(period time.Duration, busy func() bool) *idleWatch {
	w := &idleWatch{period: period, busy: busy, fired: make(chan struct{})}
	if period > 0 {
		w.timer = time.AfterFunc(period, w.expire)
	}
	return w
}

// Fired is closed when the daemon has been idle for the period.
func (w *idleWatch) Fired() <-chan struct{} { return w.fired }

func (w *idleWatch) enter() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active++
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *idleWatch) leave() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active--
	if w.active == 0 && w.timer != nil {
		w.timer.Reset(w.period)
	}
}

func (w *idleWatch) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.active > 0 {
		return
	}
	if w.busy != nil && w.busy() {
		w.timer.Reset(w.period)
		return
	}
	w.once.Do(func() { close(w.fired) })
}

// handler counts each request as activity.
func (w *idleWatch) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.enter()
		defer w.leave()
		h.ServeHTTP(rw, r)
	})
}

// conn counts an open control-channel connection as activity (ipc.Server's
// ConnState).
func (w *idleWatch) conn(open bool) {
	if open {
		w.enter()
	} else {
		w.leave()
	}
}
