package autostart

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"howett.net/plist"

	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/tstest"
)

// testSpec is a spec for kind in a temp home, running a real executable
// from a directory whose name needs quoting everywhere.
func testSpec(t *testing.T, kind Kind) *Spec {
	t.Helper()
	home := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case runtime.GOOS == "windows" && kind != TaskScheduler:
		exe = "/opt/hostlink dir/bin/hostlink" // a Unix unit's path
	case runtime.GOOS != "windows":
		odd := filepath.Join(home, "bin dir 100%")
		if err := os.MkdirAll(odd, 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(odd, "hostlink")
		if err := os.Symlink(exe, link); err != nil {
			t.Fatal(err)
		}
		exe = link
	}
	return &Spec{
		Kind: kind, Exe: exe, Args: []string{"serve", "--platform", "wss://platform.example/ws/local-executor", "--allowed-root", `C:\My Files\`, "--x=$HOME 5%"},
		Env: map[string]string{"HOSTLINK_HOME": filepath.Join(home, "hl home")}, Home: home,
		Dirs:   paths.Dirs{State: filepath.Join(home, "state"), Logs: filepath.Join(home, "logs")},
		Getenv: func(string) string { return "" }, UID: 501, User: `HOST\ada`,
	}
}

func TestInstallUninstallIdempotent(t *testing.T) {
	for _, kind := range []Kind{Launchd, Systemd, TaskScheduler} {
		t.Run(string(kind), func(t *testing.T) {
			s := testSpec(t, kind)
			if present, _, _ := Installed(s); present {
				t.Fatal("installed before install")
			}
			r1, err := Install(s)
			if err != nil {
				t.Fatal(err)
			}
			if !r1.Changed || r1.Path != s.Path() || len(r1.Commands) == 0 || !strings.HasPrefix(r1.Path, s.Home) {
				t.Fatalf("first install: %+v", r1)
			}
			if kind == Launchd {
				if fi, err := os.Stat(s.Dirs.Logs); err != nil || !fi.IsDir() {
					t.Fatalf("launchd's log directory was not created: %v", err)
				}
			}
			first, _ := os.ReadFile(r1.Path)
			r2, err := Install(s)
			if err != nil {
				t.Fatal(err)
			}
			second, _ := os.ReadFile(r2.Path)
			if r2.Changed || !bytes.Equal(first, second) || !slices.Equal(r1.Commands, r2.Commands) {
				t.Fatalf("second install changed something: %+v", r2)
			}
			if present, current, err := Installed(s); !present || !current || err != nil {
				t.Fatalf("installed: %v %v %v", present, current, err)
			}
			// A different binary makes the unit stale, and install rewrites it.
			s2 := *s
			s2.Exe = filepath.Join(filepath.Dir(s.Exe), "other")
			if _, current, _ := Installed(&s2); current {
				t.Fatal("a unit for another binary counts as current")
			}
			enabled := kind == Systemd && runtime.GOOS != "windows" // symlinks need a privilege there
			if enabled {
				// What `systemctl --user enable` would have made.
				wants := filepath.Join(filepath.Dir(r1.Path), "default.target.wants")
				os.MkdirAll(wants, 0o755)
				if err := os.Symlink(r1.Path, filepath.Join(wants, SystemdUnit)); err != nil {
					t.Fatal(err)
				}
			}
			u1, err := Uninstall(s)
			if err != nil || len(u1.Commands) == 0 {
				t.Fatalf("uninstall: %+v %v", u1, err)
			}
			if kind == Systemd {
				// The unit (and its link) stay for the stop and disable
				// printed before its removal (TestSystemdUninstallCommands).
				if u1.Changed || !u1.Kept {
					t.Fatalf("uninstall of a systemd unit: %+v", u1)
				}
				if _, err := os.Lstat(r1.Path); err != nil {
					t.Fatalf("the unit the printed commands need is gone: %v", err)
				}
				os.Remove(r1.Path) // as the printed rm does
				if enabled {
					// A link an older uninstall left dangling goes now.
					u, err := Uninstall(s)
					if err != nil || !u.Changed || !slices.Equal(u.Commands, []string{"systemctl --user daemon-reload"}) {
						t.Fatalf("uninstall with a dangling link: %+v %v", u, err)
					}
					if _, err := os.Lstat(filepath.Join(filepath.Dir(r1.Path), "default.target.wants", SystemdUnit)); !os.IsNotExist(err) {
						t.Fatal("the dangling enablement link is still there")
					}
				}
			} else {
				if !u1.Changed {
					t.Fatalf("uninstall: %+v", u1)
				}
				if _, err := os.Lstat(r1.Path); !os.IsNotExist(err) {
					t.Fatalf("unit still there: %v", err)
				}
			}
			u2, err := Uninstall(s)
			if err != nil || u2.Changed {
				t.Fatalf("second uninstall: %+v %v", u2, err)
			}
		})
	}
}

func TestCommands(t *testing.T) {
	tests := []struct {
		kind       Kind
		install    []string
		uninstall  []string
		hintSubstr string
	}{
		{Launchd, []string{"launchctl bootstrap gui/501 "}, []string{"launchctl bootout gui/501/" + LaunchdLabel}, "restarts it"},
		{Systemd, []string{"systemctl --user daemon-reload", "systemctl --user enable --now hostlink.service"}, nil, "loginctl enable-linger $USER"},
		{TaskScheduler, []string{`schtasks /Create /TN "\hostlink\hostlink" /XML "`, `schtasks /Run /TN "\hostlink\hostlink"`}, []string{`schtasks /End /TN "\hostlink\hostlink"`, `schtasks /Delete /TN "\hostlink\hostlink" /F`}, "logon"},
	}
	for _, tc := range tests {
		s := testSpec(t, tc.kind)
		r, err := Install(s)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range tc.install {
			if !strings.Contains(r.Commands[i], want) {
				t.Errorf("%s install command %d = %q, want %q", tc.kind, i, r.Commands[i], want)
			}
		}
		if tc.kind == TaskScheduler && !strings.Contains(r.Commands[0], r.Path) {
			t.Errorf("schtasks command does not name %s", r.Path)
		}
		if !strings.Contains(strings.Join(r.Hints, "\n"), tc.hintSubstr) {
			t.Errorf("%s hints %q", tc.kind, r.Hints)
		}
		if tc.kind == Systemd {
			tc.uninstall = []string{"systemctl --user stop hostlink.service", "systemctl --user disable hostlink.service",
				"rm -f " + shQuote(r.Path), "systemctl --user daemon-reload"}
		}
		u, _ := Uninstall(s)
		if !slices.Equal(u.Commands, tc.uninstall) {
			t.Errorf("%s uninstall commands %q", tc.kind, u.Commands)
		}
	}
}

func TestLaunchdPlistParses(t *testing.T) {
	s := testSpec(t, Launchd)
	unit, err := s.Unit()
	if err != nil {
		t.Fatal(err)
	}
	var job map[string]any
	if _, err := plist.Unmarshal(unit, &job); err != nil {
		t.Fatalf("plist: %v\n%s", err, unit)
	}
	if job["Label"] != LaunchdLabel || job["RunAtLoad"] != true {
		t.Fatalf("job %v", job)
	}
	ka, _ := job["KeepAlive"].(map[string]any)
	if v, ok := ka["SuccessfulExit"]; !ok || v != false {
		t.Fatalf("KeepAlive %v", job["KeepAlive"])
	}
	args, _ := job["ProgramArguments"].([]any)
	if len(args) != 1+len(s.Args) || args[0] != s.Exe || args[len(args)-2] != `C:\My Files\` {
		t.Fatalf("ProgramArguments %q", args)
	}
	env, _ := job["EnvironmentVariables"].(map[string]any)
	if env["HOSTLINK_HOME"] != s.Env["HOSTLINK_HOME"] {
		t.Fatalf("env %v", env)
	}
	// A second, independent parser: Python's plistlib, where Python is.
	if py, err := exec.LookPath("python3"); err == nil {
		cmd := exec.Command(py, "-c", "import plistlib,sys; d=plistlib.loads(sys.stdin.buffer.read()); assert d['KeepAlive']=={'SuccessfulExit': False} and d['RunAtLoad'] is True, d; print(d['ProgramArguments'][0])")
		cmd.Stdin = bytes.NewReader(unit)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != s.Exe {
			t.Fatalf("plistlib: %v %s", err, out)
		}
	}
}

// decodeUTF16 reads a UTF-16LE file with a byte order mark.
func decodeUTF16(t *testing.T, b []byte) string {
	t.Helper()
	if len(b) < 2 || b[0] != 0xFF || b[1] != 0xFE || len(b)%2 != 0 {
		t.Fatalf("not UTF-16LE with a BOM: % x", b[:min(len(b), 8)])
	}
	u := make([]uint16, 0, len(b)/2)
	for i := 2; i < len(b); i += 2 {
		u = append(u, binary.LittleEndian.Uint16(b[i:]))
	}
	return string(utf16.Decode(u))
}

func TestTaskXMLParses(t *testing.T) {
	s := testSpec(t, TaskScheduler)
	unit, err := s.Unit()
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeUTF16(t, unit)
	if !strings.HasPrefix(doc, `<?xml version="1.0" encoding="UTF-16"?>`) {
		t.Fatalf("declaration: %.60s", doc)
	}
	dec := xml.NewDecoder(strings.NewReader(doc))
	dec.CharsetReader = func(label string, r io.Reader) (io.Reader, error) { return r, nil } // already decoded
	var got task
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("xml: %v\n%s", err, doc)
	}
	if got.XMLName.Space != "http://schemas.microsoft.com/windows/2004/02/mit/task" || got.Version != "1.2" {
		t.Fatalf("root %v %s", got.XMLName, got.Version)
	}
	if !got.Triggers.Logon.Enabled || got.Triggers.Logon.UserID != `HOST\ada` || got.Principals.Principal.RunLevel != "LeastPrivilege" {
		t.Fatalf("trigger/principal %+v %+v", got.Triggers, got.Principals)
	}
	if got.Actions.Exec.Command != s.Exe || got.Settings.ExecutionTimeLimit != "PT0S" {
		t.Fatalf("exec %+v", got.Actions.Exec)
	}
	want := `serve --platform wss://platform.example/ws/local-executor --allowed-root "C:\My Files\\" "--x=$HOME 5%"`
	if got.Actions.Exec.Arguments != want {
		t.Fatalf("arguments %q, want %q", got.Actions.Exec.Arguments, want)
	}
	// Well-formed throughout, not just the parts decoded above.
	d2 := xml.NewDecoder(strings.NewReader(doc))
	d2.CharsetReader = dec.CharsetReader
	for {
		if _, err := d2.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

func TestSystemdAnalyzeVerify(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("systemd units are verified on Linux")
	}
	sa := tstest.Tool(t, "systemd-analyze")
	s := testSpec(t, Systemd)
	r, err := Install(s)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(s.Home, "run")
	os.Mkdir(run, 0o700)
	verify := func(path string) (string, error) {
		cmd := exec.Command(sa, "--user", "verify", path)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+run, "HOME="+s.Home, "SYSTEMD_LOG_COLOR=0")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := verify(r.Path); err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("systemd-analyze verify: %v\n%s\n%s", err, out, readFile(r.Path))
	}
	// The check is real: a unit with a bad setting or a missing binary fails.
	bad := filepath.Join(filepath.Dir(r.Path), "bad.service")
	os.WriteFile(bad, []byte(strings.Replace(readFile(r.Path), "Type=exec", "Type=bogus", 1)), 0o644)
	if out, _ := verify(bad); !strings.Contains(out, "bogus") {
		t.Fatalf("a bad unit passed: %s", out)
	}
	os.WriteFile(bad, []byte(strings.Replace(readFile(r.Path), "hostlink\"", "missing\"", 1)), 0o644)
	if out, err := verify(bad); err == nil {
		t.Fatalf("a unit with a missing binary passed: %s", out)
	}
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func TestSystemdQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/usr/bin/hostlink", `"/usr/bin/hostlink"`},
		{`a "b" \c`, `"a \"b\" \\c"`},
		{"100% $HOME", `"100%% $$HOME"`},
	}
	for _, tc := range tests {
		if got, err := systemdQuote(tc.in); err != nil || got != tc.want {
			t.Errorf("%q: %q %v", tc.in, got, err)
		}
	}
	if _, err := systemdQuote("a\nb"); err == nil {
		t.Error("a newline was accepted")
	}
	s := testSpec(t, Systemd)
	for _, exe := range []string{"/opt/$x/hostlink", `/opt/"q"/hostlink`, `/opt/a\b/hostlink`} {
		s.Exe = exe
		if _, err := s.Unit(); err == nil {
			t.Errorf("executable path %q was accepted", exe)
		}
	}
}

func TestRelativeExeRefused(t *testing.T) {
	s := testSpec(t, Systemd)
	s.Exe = "hostlink"
	if _, err := Install(s); err == nil {
		t.Fatal("a relative executable was accepted")
	}
}

// TestSystemdKillsControlGroup: the unit ends every process left in the
// service's cgroup when hostlink stops or dies (the one guarantee that
// holds even for a process that escaped everything else).
func TestSystemdKillsControlGroup(t *testing.T) {
	unit, err := testSpec(t, Systemd).Unit()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "\nKillMode=control-group\n") {
		t.Fatalf("no KillMode=control-group:\n%s", unit)
	}
}
