package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/waylandtest"
)

// Desktop scenarios: computer_observe (a whole 1280x800 monitor as PNG) and
// computer_act (a pointer move, settle_ms 0, with the act's fresh
// observation) on the X11 route (a private Xvfb) and on the Wayland route
// (a private headless GNOME session through the portals, whose consent
// dialog the driver answers as a person would), each through a hostlink
// mcp of its own started on that desktop and driven by the pass's client
// (the Go SDK, or the TypeScript SDK that most agents are built on). The
// peers have no desktop tools.

// desktopRoute is one desktop and the hostlink session on it, started on
// first use and stopped when the driver exits.
type desktopRoute struct {
	name  string
	cl    client // the pass's MCP client
	start func(r *desktopRoute) error

	once sync.Once
	err  error
	ss   session
	obs  string // the current observation id, for the next act
	acts int
	bt   *benchT
}

var (
	desktopMu     sync.Mutex
	desktopRoutes []*desktopRoute
)

// closeDesktops stops every desktop route started.
func closeDesktops() {
	desktopMu.Lock()
	defer desktopMu.Unlock()
	for _, r := range desktopRoutes {
		if r.ss != nil {
			r.ss.close()
		}
		if r.bt != nil {
			r.bt.close()
		}
	}
	desktopRoutes = nil
}

func (r *desktopRoute) session() (session, error) {
	r.once.Do(func() {
		desktopMu.Lock()
		desktopRoutes = append(desktopRoutes, r)
		desktopMu.Unlock()
		r.bt = &benchT{}
		r.err = r.bt.run(func() error { return r.start(r) })
	})
	return r.ss, r.err
}

// startHostlink starts `hostlink mcp` with computer control on, on the
// desktop that env names.
func (r *desktopRoute) startHostlink(ctx context.Context, base *server, env ...string) error {
	home := filepath.Join(filepath.Dir(base.home), "home-desktop-"+r.name+"-"+r.cl.Name())
	root := filepath.Join(home, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	s, err := newHostlink(base.Command[0], home, root)
	if err != nil {
		return err
	}
	cfg, err := os.ReadFile(filepath.Join(home, "config", "config.toml"))
	if err != nil {
		return err
	}
	cfg = append(cfg, "[computer]\nenabled = true\n"...)
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), cfg, 0o600); err != nil {
		return err
	}
	s.Name = "hostlink"
	s.env = append(s.env, env...)
	ss, err := r.cl.start(ctx, s)
	if err != nil {
		return err
	}
	r.ss = ss
	return nil
}

// received is the route session's received (0 before it started).
func (r *desktopRoute) received() int64 {
	if r.ss == nil {
		return 0
	}
	return r.ss.received()
}

// call runs one tool on the route's session; an error result is an error.
// It returns the result's text and how many images it had.
func (r *desktopRoute) call(ctx context.Context, tool string, args map[string]any) (string, int, error) {
	text, err := r.ss.call(ctx, tool, args, true)
	if err != nil {
		return "", 0, err
	}
	return text, r.ss.images(), nil
}

// observe takes an observation and keeps its id for the next act.
func (r *desktopRoute) observe(ctx context.Context) error {
	if _, err := r.session(); err != nil {
		return err
	}
	return r.observeNow(ctx)
}

// observeNow is observe on the started session.
func (r *desktopRoute) observeNow(ctx context.Context) error {
	text, images, err := r.call(ctx, "computer_observe", map[string]any{})
	if err != nil {
		return err
	}
	return r.keep(text, images)
}

func (r *desktopRoute) keep(text string, images int) error {
	var o struct {
		ObservationID string `json:"observation_id"`
		Observation   *struct {
			ObservationID string `json:"observation_id"`
		} `json:"observation"`
	}
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		return fmt.Errorf("observation: %v", err)
	}
	if o.Observation != nil {
		o.ObservationID = o.Observation.ObservationID
	}
	if o.ObservationID == "" || images < 1 {
		return fmt.Errorf("no observation with an image in %q", truncate(text, 200))
	}
	r.obs = o.ObservationID
	return nil
}

// act moves the pointer between two points and keeps the act's fresh
// observation for the next one.
func (r *desktopRoute) act(ctx context.Context) error {
	if r.obs == "" {
		if err := r.observe(ctx); err != nil {
			return err
		}
	}
	r.acts++
	x := 100 + 100*(r.acts%2)
	text, images, err := r.call(ctx, "computer_act", map[string]any{"observation_id": r.obs, "action": "move", "x": x, "y": 300, "settle_ms": 0})
	r.obs = ""
	if err != nil {
		return err
	}
	return r.keep(text, images)
}

// x11Route runs Xvfb on a free display.
func x11Route(base *server, cl client) *desktopRoute {
	return &desktopRoute{name: "x11", cl: cl, start: func(r *desktopRoute) error {
		xvfb, err := exec.LookPath("Xvfb")
		if err != nil {
			return errors.New("no Xvfb installed (apt-get install xvfb)")
		}
		rd, wr, err := os.Pipe()
		if err != nil {
			return err
		}
		cmd := exec.Command(xvfb, "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset")
		cmd.ExtraFiles = []*os.File{wr}
		if err := cmd.Start(); err != nil {
			return err
		}
		wr.Close()
		r.bt.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		line := make(chan string, 1)
		go func() {
			s, _ := bufio.NewReader(rd).ReadString('\n')
			rd.Close()
			line <- strings.TrimSpace(s)
		}()
		var n string
		select {
		case n = <-line:
		case <-time.After(30 * time.Second):
		}
		if n == "" {
			return errors.New("the X server (Xvfb) did not start")
		}
		return r.startHostlink(context.Background(), base, "DISPLAY=:"+n)
	}}
}

// waylandRoute runs a headless GNOME session and answers the portal's
// dialog for the first observation.
func waylandRoute(base *server, cl client) *desktopRoute {
	return &desktopRoute{name: "wayland", cl: cl, start: func(r *desktopRoute) error {
		t0 := time.Now()
		s := waylandtest.Start(r.bt, waylandtest.Options{})
		logf("wayland session up in %s", time.Since(t0).Round(time.Millisecond))
		if err := r.startHostlink(context.Background(), base, "WAYLAND_DISPLAY="+s.Display,
			"DBUS_SESSION_BUS_ADDRESS="+s.Bus, "XDG_RUNTIME_DIR="+s.Runtime); err != nil {
			return err
		}
		ctx := context.Background()
		if _, _, err := r.call(ctx, "computer_observe", map[string]any{}); err == nil {
			return errors.New("the first observation did not ask for consent")
		} else if !strings.Contains(err.Error(), "permission_pending") {
			return err
		}
		s.Allow(true)
		deadline := time.Now().Add(30 * time.Second)
		for r.observeNow(ctx) != nil {
			if time.Now().After(deadline) {
				return errors.New("no observation 30 s after consent")
			}
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	}}
}

// benchT is waylandtest's T outside a test: Fatal ends the route's start
// (see run), Cleanup runs when the driver exits.
type benchT struct {
	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

type benchFatal struct{ msg string }

func (b *benchT) Helper()          {}
func (b *benchT) Cleanup(f func()) { b.mu.Lock(); b.cleanups = append(b.cleanups, f); b.mu.Unlock() }
func (b *benchT) Fatal(a ...any)   { b.fail(fmt.Sprint(a...)) }
func (b *benchT) Fatalf(f string, a ...any) {
	b.fail(fmt.Sprintf(f, a...))
}
func (b *benchT) Logf(f string, a ...any) { logf(f, a...) }
func (b *benchT) Failed() bool            { b.mu.Lock(); defer b.mu.Unlock(); return b.failed }
func (b *benchT) TempDir() string {
	d, err := os.MkdirTemp("", "hostlink-bench-desktop-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func (b *benchT) fail(msg string) {
	b.mu.Lock()
	b.failed = true
	b.mu.Unlock()
	panic(benchFatal{msg})
}

// run calls fn, turning a Fatal inside it into an error.
func (b *benchT) run(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(benchFatal)
			if !ok {
				panic(p)
			}
			err = errors.New(f.msg)
		}
	}()
	return fn()
}

func (b *benchT) close() {
	b.mu.Lock()
	cs := b.cleanups
	b.cleanups = nil
	b.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}

// desktopScenarios are the observe and act scenarios of both routes, for
// the pass of client cl: each route is a desktop of its own with one
// hostlink session driven by cl.
func (c *config) desktopScenarios(cl client, servers []*server, mk func(key, title string, reps int) *scenario) []*scenario {
	var base *server
	for _, s := range servers {
		if s.Name == "hostlink" {
			base = s
		}
	}
	var out []*scenario
	for _, r := range []*desktopRoute{x11Route(base, cl), waylandRoute(base, cl)} {
		obs := mk("observe_"+r.name, "computer_observe of a 1280x800 "+routeTitle[r.name]+" (PNG)", c.Big)
		act := mk("act_"+r.name, "computer_act move on "+routeTitle[r.name]+", with its fresh observation (settle_ms 0)", c.Big)
		for _, s := range servers {
			if s.Name != "hostlink" {
				obs.na[s.Name] = "no desktop tools"
				act.na[s.Name] = "no desktop tools"
			}
		}
		out = append(out, obs, act)
		obs.ops["hostlink"] = func(ctx context.Context, _ session) error { return r.observe(ctx) }
		obs.tools["hostlink"] = "computer_observe"
		act.ops["hostlink"] = func(ctx context.Context, _ session) error { return r.act(ctx) }
		act.tools["hostlink"] = "computer_act (move)"
		recv := map[string]func() int64{"hostlink": r.received}
		obs.received, act.received = recv, recv
	}
	return out
}

var routeTitle = map[string]string{
	"x11":     "X11 screen (Xvfb)",
	"wayland": "Wayland monitor (mutter, through the portals)",
}
