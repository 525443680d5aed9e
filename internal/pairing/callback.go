package pairing

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The callback listener's ports: the first free one in this range, else
// any free port. Platforms register every port in the range as a redirect
// URI.
const (
	FirstPort = 41899
	LastPort  = 41910
)

// ListenCallback binds the redirect listener on 127.0.0.1 only (never a
// wildcard or a public address): the first free port from first through
// last, else a free port the OS picks.
func ListenCallback(first, last int) (net.Listener, error) {
	var lc net.ListenConfig
	for p := first; p <= last; p++ {
		ln, err := lc.Listen(context.Background(), "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			return ln, nil
		}
	}
	return lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
}

// callback receives the redirect. It accepts exactly one callback whose
// state matches: requests with a wrong or missing state are refused and
// the wait goes on (they may come from another page); anything after the
// one valid callback is refused.
type callback struct {
	state string
	// finish completes the pairing with the code; its error decides the
	// page the browser shows.
	finish func(ctx context.Context, code string) error

	mu     sync.Mutex
	used   bool
	result chan error // receives the one valid callback's outcome
}

func newCallback(state string, finish func(context.Context, string) error) *callback {
	return &callback{state: state, finish: finish, result: make(chan error, 1)}
}

func (c *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(c.state)) != 1 {
		resultPage(w, http.StatusBadRequest, false, "This sign-in response does not belong to the pairing hostlink started (state mismatch). Nothing was changed.")
		return
	}
	c.mu.Lock()
	if c.used {
		c.mu.Unlock()
		resultPage(w, http.StatusConflict, false, "This pairing already received its answer; a second one is refused.")
		return
	}
	c.used = true
	c.mu.Unlock()
	var err error
	switch {
	case q.Get("error") != "":
		err = fmt.Errorf("the platform refused: %s %s", q.Get("error"), q.Get("error_description"))
	case q.Get("code") == "":
		err = errors.New("the platform's answer carries no code")
	default:
		err = c.finish(r.Context(), q.Get("code"))
	}
	if err != nil {
		resultPage(w, http.StatusBadRequest, false, "Pairing failed: "+err.Error()+". Run `hostlink pair` again.")
	} else {
		resultPage(w, http.StatusOK, true, "hostlink is paired with your account. You can close this window.")
	}
	c.result <- err
}

// resultPage is the plain page the browser shows at the end.
func resultPage(w http.ResponseWriter, code int, ok bool, msg string) {
	title := "hostlink pairing failed"
	if ok {
		title = "hostlink is paired"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(code)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>%s</title><h1>%s</h1><p>%s</p>\n", title, title, html.EscapeString(msg))
}

// wait serves ln until the valid callback has been handled, ctx ends or
// timeout passes.
func (c *callback) wait(ctx context.Context, ln net.Listener, timeout time.Duration) error {
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-c.result:
		return err
	case <-t.C:
		return fmt.Errorf("no answer from the browser within %s: run `hostlink pair` again (or `hostlink pair --device` on a machine without a browser)", timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}
