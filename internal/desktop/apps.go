package desktop

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/procs"
)

// AppNotFound: no installed application has that id or program; only
// installed applications are launched.
const AppNotFound errcode.Code = "APP_NOT_FOUND"

// maxInstalled bounds the installed applications scanned and listed.
const maxInstalled = 2000

func init() {
	ops.AddDescribed(&computerOps, spec(desktopapi.OpApps, "List applications",
		"The running applications that have windows (pid, name, program, frontmost, window count) and, if asked, the installed applications computer_launch_app can start.",
		policy.ComputerObserve, ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Service).describeApps, value((*Service).apps))
}

// describeApps describes the request to the policy.
func (*Service) describeApps(a desktopapi.AppsArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, a.Desktop, a), nil
}

func init() {
	ops.AddDescribed(&computerOps, spec(desktopapi.OpLaunchApp, "Launch an application",
		"Start an installed application (Linux: an XDG desktop entry, by id or by its program's path) without a shell, with a scrubbed environment, as a child of hostlink that ends when hostlink stops.",
		policy.Computer, ops.Spec{Budget: LaunchBudget}), (*Service).describeLaunch, value((*Service).launchApp))
}

// describeLaunch describes the request to the policy.
func (*Service) describeLaunch(a desktopapi.LaunchArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, a.Desktop, a), nil
}

// Bounds of a launch request.
const (
	maxLaunchArgs   = 32
	maxLaunchArgLen = 4096
	activateWait    = 5 * time.Second
)

func (s *Service) apps(ctx context.Context, c *ops.Call, a desktopapi.AppsArgs) (*desktopapi.AppsResult, error) {
	var ws []native.Window
	if err := s.Do(ctx, a.Desktop, func(b native.Backend) error {
		var err error
		ws, err = b.Windows(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	installed := s.installed()
	res := &desktopapi.AppsResult{Running: []desktopapi.RunningApp{}}
	byPID := map[int]*desktopapi.RunningApp{}
	for _, w := range ws {
		if w.PID == 0 {
			continue
		}
		r := byPID[w.PID]
		if r == nil {
			r = &desktopapi.RunningApp{PID: w.PID, Name: w.App, ExecutablePath: exePath(w.PID)}
			if e, ok := matchEntry(installed, w.App, r.ExecutablePath); ok {
				r.AppID, r.Name = e.ID, e.Name
			}
			byPID[w.PID] = r
		}
		r.WindowCount++
		r.Frontmost = r.Frontmost || w.Focused
	}
	for _, r := range byPID {
		res.Running = append(res.Running, *r)
	}
	slices.SortFunc(res.Running, func(x, y desktopapi.RunningApp) int { return x.PID - y.PID })
	if a.Installed {
		res.Installed = []desktopapi.InstalledApp{}
		for _, e := range installed {
			if e.NoDisplay {
				continue
			}
			exe, _ := resolveExec(e)
			res.Installed = append(res.Installed, desktopapi.InstalledApp{AppID: e.ID, Name: e.Name, Executable: exe, Terminal: e.Terminal})
		}
	}
	c.Detail("running", len(res.Running))
	return res, nil
}

// installed lists the applications computer_launch_app may start: XDG
// desktop entries (Linux and the BSDs), App Paths registrations (Windows);
// none on macOS yet. See installed_*.go.
func (s *Service) installed() []desktopEntry { return platformApps(maxInstalled) }

// sameName compares application ids and program paths: without case on
// Windows, exactly elsewhere.
func sameName(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// matchEntry finds the installed application of a window: by the window
// class the entry declares, by its id, or by its program.
func matchEntry(es []desktopEntry, class, exe string) (desktopEntry, bool) {
	for _, e := range es {
		if class != "" && (strings.EqualFold(e.WMClass, class) || strings.EqualFold(e.ID, class)) {
			return e, true
		}
	}
	if exe != "" {
		for _, e := range es {
			if p, err := resolveExec(e); err == nil && sameName(p, exe) {
				return e, true
			}
		}
	}
	return desktopEntry{}, false
}

// resolveExec is the entry's program: its first Exec argument looked up on
// PATH, with symbolic links resolved.
func resolveExec(e desktopEntry) (string, error) {
	p, err := exec.LookPath(e.Exec[0])
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}

func (s *Service) launchApp(ctx context.Context, c *ops.Call, a desktopapi.LaunchArgs) (*desktopapi.LaunchResult, error) {
	if (a.AppID == "") == (a.ExecutablePath == "") {
		return nil, errcode.New(errcode.InvalidArgument, "name exactly one of app_id and executable_path")
	}
	if len(a.Args) > maxLaunchArgs {
		return nil, errcode.New(errcode.InvalidArgument, "at most %d args", maxLaunchArgs)
	}
	for _, arg := range a.Args {
		if len(arg) > maxLaunchArgLen || strings.ContainsRune(arg, 0) {
			return nil, errcode.New(errcode.InvalidArgument, "each arg at most %d bytes, without NUL", maxLaunchArgLen)
		}
	}
	if runtime.GOOS == "darwin" {
		return nil, errcode.New(FeatureNotSupported, "launching applications is not implemented on %s", runtime.GOOS)
	}
	e, argv, err := s.resolveLaunch(a)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	if err := s.Do(ctx, a.Desktop, func(b native.Backend) error {
		if le, ok := b.(native.LaunchEnv); ok {
			maps.Copy(env, le.LaunchEnv())
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// The desktop session's variables a GUI application needs; none of
	// them is a secret. Everything else stays behind (procs.Environ).
	for _, k := range []string{"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "XDG_DATA_HOME", "XDG_DATA_DIRS",
		"XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE"} {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	home, _ := os.UserHomeDir()
	c.Detail("app_id", e.ID)
	c.Detail("argv", len(argv))
	p, err := procs.Start(procs.Spec{Argv: argv, Dir: home, Env: env}, nil, nil)
	if err != nil {
		return nil, err
	}
	// hostlink is the application's parent: it reaps it, and stops it
	// when hostlink stops (procs.KillAll).
	go p.Wait()
	res := &desktopapi.LaunchResult{PID: p.Pid(), AppID: e.ID}
	c.Detail("pid", res.PID)
	if a.Activate {
		res.Activated = s.activate(ctx, a.Desktop, res.PID)
	}
	return res, nil
}

// resolveLaunch finds what to start: an installed entry by id, or the
// entry whose program is executable_path. Terminal applications are
// refused: hostlink does not pick a terminal for them.
func (s *Service) resolveLaunch(a desktopapi.LaunchArgs) (desktopEntry, []string, error) {
	installed := s.installed()
	if a.AppID != "" {
		id := strings.TrimSuffix(a.AppID, ".desktop")
		for _, e := range installed {
			if !sameName(e.ID, id) {
				continue
			}
			if e.Terminal {
				return e, nil, errcode.New(FeatureNotSupported, "%s runs in a terminal; start a terminal application instead", trunc(id))
			}
			if _, err := resolveExec(e); err != nil {
				return e, nil, errcode.New(errcode.DependencyMissing, "%s's program %s is not installed", trunc(id), trunc(e.Exec[0]))
			}
			argv, ok := e.argv(a.Args)
			if !ok {
				return e, nil, errcode.New(errcode.InvalidArgument, "%s does not take these args (its Exec has no matching file or URL field)", trunc(id))
			}
			return e, argv, nil
		}
		return desktopEntry{}, nil, errcode.New(AppNotFound, "no installed application %q (see computer_apps with installed)", trunc(a.AppID))
	}
	if !filepath.IsAbs(a.ExecutablePath) {
		return desktopEntry{}, nil, errcode.New(errcode.InvalidArgument, "executable_path must be absolute")
	}
	want, err := filepath.EvalSymlinks(a.ExecutablePath)
	if err != nil {
		return desktopEntry{}, nil, errcode.New(AppNotFound, "%s does not exist", trunc(a.ExecutablePath))
	}
	for _, e := range installed {
		if p, err := resolveExec(e); err == nil && sameName(p, want) && !e.Terminal {
			return e, append([]string{a.ExecutablePath}, a.Args...), nil
		}
	}
	return desktopEntry{}, nil, errcode.New(AppNotFound, "%s is not the program of an installed application; only those are launched", trunc(a.ExecutablePath))
}

// activate waits for a window of pid and focuses it; it reports whether
// that window ended up focused.
func (s *Service) activate(ctx context.Context, desktop string, pid int) bool {
	deadline := time.Now().Add(activateWait)
	for time.Now().Before(deadline) {
		var focused bool
		found := false
		s.Do(ctx, desktop, func(b native.Backend) error {
			ws, err := b.Windows(ctx)
			if err != nil {
				return err
			}
			for _, w := range ws {
				if w.PID == pid && !w.Minimized {
					found = true
					if w.Focused {
						focused = true
					} else {
						b.Focus(ctx, w)
					}
					return nil
				}
			}
			return nil
		})
		if focused {
			return true
		}
		wait := 100 * time.Millisecond
		if found {
			wait = 200 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
	return false
}
