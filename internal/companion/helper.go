package companion

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/procs"
)

// helperID is the companion id of the helper a runtime starts itself.
const helperID = "wsl-interop"

// Helper is a companion the runtime starts and supervises itself: on the
// WSL interop route, the Windows hostlink.exe run from WSL through
// /mnt/c/... The helper is started as
//
//	Argv... companion --stdio [--commands] [--no-desktop]
//
// and speaks the companion protocol over its standard input and output,
// so nothing listens and no credential exists: the connection is the
// runtime's own child's pipes. It is restarted with backoff when it exits
// and stopped when the runtime closes.
type Helper struct {
	Argv      []string // the helper program and any leading arguments
	Commands  bool     // let the runtime run commands through it
	NoDesktop bool     // do not offer the desktop
	Env       []string // extra environment, KEY=VALUE
}

// helperState is what companion_status reports about the helper.
type helperState struct {
	mu       sync.Mutex
	argv     []string
	starts   int
	lastErr  string
	lastExit time.Time
}

// helperStopGrace is how long a helper whose session ended has to exit
// before its tree is ended.
const helperStopGrace = 5 * time.Second

// helperBackoff bounds the wait between helper restarts.
var helperBackoff = [2]time.Duration{time.Second, time.Minute}

// StartHelper starts h and keeps it running until the runtime closes.
func (r *Runtime) StartHelper(h Helper) {
	st := &helperState{argv: h.Argv}
	r.mu.Lock()
	r.helper = st
	r.mu.Unlock()
	r.helpers.Add(1)
	go func() {
		defer r.helpers.Done()
		delay := helperBackoff[0]
		for r.ctx.Err() == nil {
			started := time.Now()
			err := r.runHelper(r.ctx, h, st)
			if r.ctx.Err() != nil {
				return
			}
			st.mu.Lock()
			st.lastErr, st.lastExit = err.Error(), time.Now()
			st.mu.Unlock()
			if time.Since(started) > helperBackoff[1] {
				delay = helperBackoff[0]
			}
			slog.Warn("companion helper ended; restarting", "program", h.Argv[0], "err", err, "in", delay)
			select {
			case <-r.ctx.Done():
				return
			case <-time.After(delay):
			}
			delay = min(2*delay, helperBackoff[1])
		}
	}()
}

// runHelper runs the helper once and serves its connection until either
// ends, returning why.
func (r *Runtime) runHelper(ctx context.Context, h Helper, st *helperState) error {
	args := append(append([]string{}, h.Argv[1:]...), "companion", "--stdio")
	if h.Commands {
		args = append(args, "--commands")
	}
	if h.NoDesktop {
		args = append(args, "--no-desktop")
	}
	env := map[string]string{}
	for _, kv := range h.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		dir = os.TempDir()
	}
	// The helper is hostlink: it gets hostlink's environment, and through
	// internal/procs it dies with this hostlink (see procs).
	outR, outW := io.Pipe()
	stderr := &tail{max: 2048}
	p, err := procs.Start(procs.Spec{Argv: append([]string{h.Argv[0]}, args...), Dir: dir, Env: env, FullEnv: true, Stdin: true},
		outW, stderr)
	if err != nil {
		outR.Close()
		return fmt.Errorf("starting %s: %w", h.Argv[0], err)
	}
	st.mu.Lock()
	st.starts++
	st.mu.Unlock()
	go func() {
		p.Wait()
		outW.Close()
	}()
	conn := &pipeConn{r: outR, w: p.Stdin()}
	l := newOneConnListener(conn)
	served := make(chan struct{})
	srv := &http.Server{ReadHeaderTimeout: handshakeTimeout, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		defer close(served)
		r.accept(w, req, RouteWSLInterop)
	})}
	go srv.Serve(l)
	select {
	case <-served:
		// The session is over: closing its streams tells the helper,
		// which exits on end of input; it has helperStopGrace to.
		conn.Close()
	case <-p.Done():
	case <-ctx.Done():
		conn.Close()
	}
	select {
	case <-p.Done():
	case <-time.After(helperStopGrace):
		p.Terminate(time.Second)
	}
	pst, werr := p.Wait()
	l.Close()
	srv.Close()
	conn.Close()
	switch {
	case werr != nil:
	case pst.Signal != "":
		werr = fmt.Errorf("signal %s", pst.Signal)
	case pst.ExitCode != 0:
		werr = fmt.Errorf("exit status %d", pst.ExitCode)
	}
	msg := "the helper exited"
	if werr != nil {
		msg = "the helper ended: " + werr.Error()
	}
	if t := strings.TrimSpace(stderr.String()); t != "" {
		msg += " (" + t + ")"
	}
	return fmt.Errorf("%s", msg)
}

// HelperState reports the supervised helper, or nil when there is none.
func (r *Runtime) HelperState() *companionapi.HelperStatus {
	r.mu.Lock()
	st := r.helper
	sess := r.sessions[helperID]
	connected := sess != nil && sess.ready
	r.mu.Unlock()
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	hs := &companionapi.HelperStatus{Program: st.argv[0], Starts: st.starts, Connected: connected, LastError: st.lastErr}
	if !st.lastExit.IsZero() {
		hs.LastExit = st.lastExit.UTC().Format(time.RFC3339)
	}
	return hs
}

// tail keeps the last max bytes written to it: a helper's stderr, for
// the reason it ended.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
