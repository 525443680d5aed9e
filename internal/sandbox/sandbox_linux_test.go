package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/tstest"
)

// helperEnv makes the test binary, started as a command, run a helper
// that tries one thing and exits 0 if it could.
const helperEnv = "HOSTLINK_SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	var err error
	switch mode {
	case "dial": // network, address
		d := net.Dialer{Timeout: 10 * time.Second}
		d.SetMultipathTCP(false)
		var c net.Conn
		if c, err = d.Dial(args[0], args[1]); err == nil {
			c.Close()
		}
	case "listen": // plain TCP (not Multipath TCP) on 127.0.0.1:args[0]
		var lc net.ListenConfig
		lc.SetMultipathTCP(false)
		var l net.Listener
		if l, err = lc.Listen(context.Background(), "tcp4", "127.0.0.1:"+args[0]); err == nil {
			l.Close()
		}
	case "udp": // send a datagram to args[0]
		var c net.Conn
		if c, err = net.Dial("udp", args[0]); err == nil {
			_, err = c.Write([]byte("x"))
			c.Close()
		}
	case "squat": // kind, path: what another user leaves at a name
		err = squat(args[0], args[1])
	default:
		err = fmt.Errorf("unknown helper %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// world is a user's machine in miniature: a home with credential stores,
// hostlink's own directories with its secrets and control socket, a
// workdir, a directory outside it, and hostlink's listeners.
type world struct {
	home, hostlink, workdir, outside string
	secrets                          []string // files no sandboxed command may read
	hidden                           []string // the hidden paths (absolute)
	tcp                              string   // a TCP listener of hostlink's
	socket                           string   // hostlink's control socket
	pol                              sandbox.Policy
}

const secret = "s3cret-content"

// hiddenFiles are the default hidden paths that are files.
var hiddenFiles = map[string]bool{
	".docker/config.json": true, ".netrc": true, ".git-credentials": true, ".npmrc": true, ".pypirc": true,
	".cargo/credentials.toml": true, ".terraform.d/credentials.tfrc.json": true, ".vault-token": true,
}

func newWorld(t *testing.T, hostlinkInWorkdir bool) *world {
	t.Helper()
	if st := sandbox.Probe(); st.Mode != sandbox.Workdir {
		tstest.Missing(t, "commands cannot be sandboxed here: "+st.Reason)
	}
	base := t.TempDir()
	w := &world{home: filepath.Join(base, "home"), workdir: filepath.Join(base, "work"), outside: filepath.Join(base, "outside")}
	w.hostlink = filepath.Join(base, "hostlink")
	if hostlinkInWorkdir {
		w.hostlink = filepath.Join(w.workdir, ".hostlink")
	}
	for _, d := range []string{w.home, w.workdir, w.outside} {
		mkdir(t, d)
	}
	// Every default hidden path, each holding (or being) a secret.
	for _, rel := range sandbox.DefaultHidden(runtime.GOOS) {
		p := filepath.Join(w.home, filepath.FromSlash(rel))
		w.hidden = append(w.hidden, p)
		if hiddenFiles[rel] {
			mkdir(t, filepath.Dir(p))
			write(t, p, secret)
			w.secrets = append(w.secrets, p)
			continue
		}
		mkdir(t, p)
		write(t, filepath.Join(p, "id_key"), secret)
		w.secrets = append(w.secrets, filepath.Join(p, "id_key"))
	}
	var protected []string
	for _, d := range []string{"config", "state", "audit", "logs", "run"} {
		protected = append(protected, filepath.Join(w.hostlink, d))
		mkdir(t, filepath.Join(w.hostlink, d))
	}
	for _, f := range []string{"state/token", "state/audit.key", "config/config.toml"} {
		p := filepath.Join(w.hostlink, f)
		write(t, p, secret)
		w.secrets = append(w.secrets, p)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go acceptAll(ln)
	w.tcp = ln.Addr().String()
	w.socket = filepath.Join(w.hostlink, "run", "control.sock")
	ul, err := net.Listen("unix", w.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ul.Close() })
	go acceptAll(ul)
	w.pol = sandbox.Policy{Mode: sandbox.Workdir, Hidden: w.hidden, Protected: protected, TmpRoot: filepath.Join(w.hostlink, "state", "sandbox")}
	return w
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// run runs spec in the world's workdir, confined by pol (nil: not at all).
func (w *world) run(t *testing.T, spec procs.Spec, pol *sandbox.Policy) (stdout, stderr string, code int) {
	t.Helper()
	if spec.Dir == "" {
		spec.Dir = w.workdir
	}
	if pol != nil {
		p := *pol
		p.Workdir = w.workdir
		spec.Sandbox = &p
	}
	var out, errb strings.Builder
	p, err := procs.Start(spec, &out, &errb)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	st, err := p.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return out.String(), errb.String(), st.ExitCode
}

func sh(line string) procs.Spec { return procs.Spec{Command: line, Shell: "sh"} }

func (w *world) helperSpec(t *testing.T, mode string, args ...string) procs.Spec {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return procs.Spec{Argv: append([]string{exe}, args...), Env: map[string]string{helperEnv: mode}}
}

// escape is one thing a sandboxed command must fail to do.
type escape struct {
	name string
	spec procs.Spec
	// landlock: the Landlock-only fallback enforces it too.
	landlock bool
}

func (w *world) escapes(t *testing.T) []escape {
	var es []escape
	add := func(name string, spec procs.Spec, landlock bool) { es = append(es, escape{name, spec, landlock}) }
	add("write outside the workdir", sh("echo x > "+w.outside+"/new && test -s "+w.outside+"/new"), true)
	add("write outside through a symlink in the workdir", sh("ln -sf "+w.outside+"/via-link link && echo x > link && test -s "+w.outside+"/via-link"), true)
	for _, s := range w.secrets {
		rel, _ := filepath.Rel(filepath.Dir(w.home), s)
		add("read "+rel, sh("cat '"+s+"'"), true)
	}
	add("list a hidden directory", sh("ls "+w.home+"/.ssh | grep ."), false)
	add("list hostlink's state", sh("ls "+w.hostlink+"/state | grep ."), false)
	add("connect to a TCP listener on 127.0.0.1", w.helperSpec(t, "dial", "tcp4", w.tcp), true)
	add("bind a TCP port", w.helperSpec(t, "listen", strconv.Itoa(freePort(t))), true)
	add("connect to hostlink's control socket", w.helperSpec(t, "dial", "unix", w.socket), false)
	add("signal hostlink", sh("kill -0 "+strconv.Itoa(os.Getpid())), true)
	token := filepath.Join(w.hostlink, "state", "token")
	add("read through /proc/self/root", sh("cat /proc/self/root"+token), true)
	add("read through hostlink's /proc/pid/root", sh("cat /proc/"+strconv.Itoa(os.Getpid())+"/root"+token), true)
	if unshare, err := exec.LookPath("unshare"); err == nil {
		add("escape through a user namespace of its own", sh(unshare+" -Urm sh -c 'umount -l "+filepath.Dir(token)+" 2>/dev/null; umount -l "+w.home+"/.ssh 2>/dev/null; cat "+token+" "+w.home+"/.ssh/id_key'"), true)
	}
	return es
}

// Each escape fails sandboxed and succeeds with the sandbox off, so the
// test proves the sandbox rather than a broken command. As root in CI,
// this also shows the sandbox confines root.
func TestEscapesFail(t *testing.T) {
	for _, in := range []bool{false, true} {
		t.Run(fmt.Sprintf("hostlink_in_workdir=%v", in), func(t *testing.T) {
			w := newWorld(t, in)
			t.Logf("uid %d, %s", os.Getuid(), sandbox.Probe())
			for _, e := range w.escapes(t) {
				t.Run(e.name, func(t *testing.T) {
					out, errOut, code := w.run(t, e.spec, &w.pol)
					if code == 0 || strings.Contains(out, secret) {
						t.Errorf("sandboxed: exit %d, stdout %q, stderr %q: the sandbox let it through", code, out, errOut)
					}
					out, errOut, code = w.run(t, e.spec, nil)
					if code != 0 {
						t.Errorf("unsandboxed: exit %d, stdout %q, stderr %q: the test does not prove the sandbox", code, out, errOut)
					}
				})
			}
		})
	}
}

// Without user namespaces, Landlock alone still stops what it can, and
// the status names what it cannot.
func TestEscapesFailLandlockOnly(t *testing.T) {
	w := newWorld(t, false)
	st := sandbox.LandlockOnly(t)
	t.Logf("%s", st)
	for _, e := range w.escapes(t) {
		if !e.landlock {
			continue
		}
		t.Run(e.name, func(t *testing.T) {
			out, errOut, code := w.run(t, e.spec, &w.pol)
			if code == 0 || strings.Contains(out, secret) {
				t.Errorf("exit %d, stdout %q, stderr %q: Landlock let it through", code, out, errOut)
			}
		})
	}
}

// A process outside the command's tree survives the command's signal.
func TestSignalOutsideTree(t *testing.T) {
	w := newWorld(t, false)
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	pid := strconv.Itoa(other.Process.Pid)
	if _, errOut, code := w.run(t, sh("kill -TERM "+pid), &w.pol); code == 0 {
		t.Fatalf("the sandboxed kill succeeded (%s)", errOut)
	}
	if err := other.Process.Signal(os.Signal(nil)); err != nil && !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("the other process is gone: %v", err)
	}
	// Its own tree it may signal.
	if _, errOut, code := w.run(t, sh("sleep 60 & kill -TERM $! && wait $!; test $? -gt 128"), &w.pol); code != 0 {
		t.Fatalf("signalling its own child failed: %s", errOut)
	}
}

// Ordinary work still succeeds inside the workdir.
func TestOrdinaryWork(t *testing.T) {
	w := newWorld(t, false)
	t.Run("shell pipeline", func(t *testing.T) {
		out, errOut, code := w.run(t, sh("seq 1 100 | grep 7 | wc -l"), &w.pol)
		if code != 0 || strings.TrimSpace(out) != "19" {
			t.Fatalf("exit %d, %q, %q", code, out, errOut)
		}
	})
	t.Run("script using TMPDIR", func(t *testing.T) {
		out, errOut, code := w.run(t, sh(`f=$(mktemp) && echo data > "$f" && cat "$f" && rm "$f" && mkdir "$TMPDIR/d" && ls -d "$TMPDIR/d"`), &w.pol)
		if code != 0 || !strings.HasPrefix(out, "data\n") {
			t.Fatalf("exit %d, %q, %q", code, out, errOut)
		}
	})
	t.Run("git init and commit", func(t *testing.T) {
		tstest.Tool(t, "git")
		line := "git init -q repo && cd repo && echo hi > f && git add f && git -c user.name=t -c user.email=t@example.com commit -qm first && git log --oneline | wc -l"
		out, errOut, code := w.run(t, sh(line), &w.pol)
		if code != 0 || strings.TrimSpace(out) != "1" {
			t.Fatalf("exit %d, %q, %q", code, out, errOut)
		}
	})
	t.Run("go build and go test", func(t *testing.T) {
		goBin := tstest.Tool(t, "go")
		// The user's own build cache, made writable (a fresh one would
		// build the standard library first).
		b, err := exec.Command(goBin, "env", "GOCACHE").Output()
		if err != nil {
			t.Fatal(err)
		}
		cache := strings.TrimSpace(string(b))
		mkdir(t, cache)
		mod := filepath.Join(w.workdir, "mod")
		mkdir(t, mod)
		write(t, filepath.Join(mod, "go.mod"), "module example.com/m\n\ngo 1.22\n")
		write(t, filepath.Join(mod, "m.go"), "package main\n\nfunc main() { println(add(1, 2)) }\n\nfunc add(a, b int) int { return a + b }\n")
		write(t, filepath.Join(mod, "m_test.go"), "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n")
		pol := w.pol
		pol.Writable = []string{cache}
		spec := sh(goBin + " build -o m . && ./m && " + goBin + " test ./...")
		spec.Dir = mod
		spec.Env = map[string]string{"GOCACHE": cache, "GOPATH": filepath.Join(w.workdir, "gopath"), "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GOTELEMETRY": "off"}
		out, errOut, code := w.run(t, spec, &pol)
		if code != 0 || !strings.Contains(errOut, "3") || !strings.Contains(out, "ok") {
			t.Fatalf("exit %d, %q, %q", code, out, errOut)
		}
		// Without a writable cache (one outside /tmp, which the sandbox
		// replaces), the build is refused, and the hint says where and
		// how to allow it.
		pol.Writable = nil
		spec.Env["GOCACHE"] = outsideTmpDir(t)
		_, errOut, code = w.run(t, spec, &pol)
		if code == 0 {
			t.Fatal("go build wrote its cache outside the workdir")
		}
		p := pol
		p.Workdir = w.workdir
		if h := sandbox.Hint(p, w.workdir, errOut); !strings.Contains(h, spec.Env["GOCACHE"]) || !strings.Contains(h, "writable") {
			t.Errorf("hint %q for %q", h, errOut)
		}
	})
}

// outsideTmpDir returns a fresh directory outside /tmp (so that the
// sandbox keeps it where it is, not writable) and outside the test's
// temporary directory: below the user's cache directory, or, when HOME
// is below /tmp itself, below /var/tmp.
func outsideTmpDir(t *testing.T) string {
	t.Helper()
	tmp, err := filepath.EvalSymlinks("/tmp")
	if err != nil {
		t.Fatal(err)
	}
	var tried []string
	candidates := []string{"/var/tmp"}
	if c, err := os.UserCacheDir(); err == nil {
		candidates = append([]string{c}, candidates...)
	}
	for _, c := range candidates {
		if err := os.MkdirAll(c, 0o700); err != nil {
			tried = append(tried, err.Error())
			continue
		}
		real, err := filepath.EvalSymlinks(c)
		if err != nil || real == tmp || strings.HasPrefix(real, tmp+"/") {
			tried = append(tried, c+" is below /tmp")
			continue
		}
		d, err := os.MkdirTemp(real, "hostlink-sandbox-test-")
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Fatalf("no writable directory outside /tmp: %s", strings.Join(tried, "; "))
	return ""
}

// The command's /tmp is its own: what it writes there never reaches the
// machine's /tmp, and it sees nothing of what others keep there.
func TestPrivateTmp(t *testing.T) {
	w := newWorld(t, false)
	if sandbox.Probe().Mechanism != sandbox.MechNamespaces {
		tstest.Missing(t, "no private /tmp without namespaces")
	}
	name := fmt.Sprintf("hostlink-sandbox-test-%d", time.Now().UnixNano())
	// The machine's /tmp, whatever TMPDIR says.
	host := filepath.Join("/tmp", name)
	theirs := filepath.Join("/tmp", name+"-theirs")
	write(t, theirs, secret)
	defer os.Remove(theirs)
	out, errOut, code := w.run(t, sh("echo x > /tmp/"+name+" && cat /tmp/"+name+"-theirs"), &w.pol)
	if _, err := os.Stat(host); err == nil || strings.Contains(out, secret) || code == 0 {
		os.Remove(host)
		t.Fatalf("exit %d, %q, %q: the command reached the machine's /tmp", code, out, errOut)
	}
	if _, _, code := w.run(t, sh("echo x > /tmp/"+name+" && cat /tmp/"+name+"-theirs"), nil); code != 0 {
		t.Fatal("unsandboxed, the same command failed")
	}
	os.Remove(host)
}

// With the network allowed, the same connection succeeds.
func TestNetworkAllowed(t *testing.T) {
	w := newWorld(t, false)
	pol := w.pol
	pol.Network = true
	if _, errOut, code := w.run(t, w.helperSpec(t, "dial", "tcp4", w.tcp), &pol); code != 0 {
		t.Fatalf("dial with the network allowed: %s", errOut)
	}
}

// A command's pid is the command's own, not a launcher's, and its exit
// code and output come through.
func TestPidAndExitCode(t *testing.T) {
	w := newWorld(t, false)
	var out strings.Builder
	p, err := procs.Start(procs.Spec{Command: "echo $$; exit 7", Shell: "sh", Dir: w.workdir, Sandbox: &sandbox.Policy{Mode: sandbox.Workdir, Workdir: w.workdir, TmpRoot: w.pol.TmpRoot}}, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := p.Wait()
	if st.ExitCode != 7 || strings.TrimSpace(out.String()) != strconv.Itoa(p.Pid()) {
		t.Fatalf("exit %d, printed pid %q, Pid() %d", st.ExitCode, out.String(), p.Pid())
	}
	if s, ok := p.Sandbox(); !ok || s.Mode != sandbox.Workdir {
		t.Fatalf("Sandbox() = %v, %v", s, ok)
	}
}

// A workdir inside a hidden path is refused before anything runs.
func TestWorkdirInsideHidden(t *testing.T) {
	w := newWorld(t, false)
	inside := filepath.Join(w.home, ".ssh", "work")
	mkdir(t, inside)
	_, err := procs.Start(procs.Spec{Command: "true", Shell: "sh", Dir: inside,
		Sandbox: &sandbox.Policy{Mode: sandbox.Workdir, Workdir: inside, Hidden: w.hidden, TmpRoot: w.pol.TmpRoot}}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "SANDBOX_FAILED") {
		t.Fatalf("err %v, want SANDBOX_FAILED", err)
	}
}

// A program the sandbox hides fails as the sandbox's doing; one the OS
// will not run anywhere fails as any start does, with the OS's reason.
func TestExecFailures(t *testing.T) {
	w := newWorld(t, false)
	hidden := filepath.Join(w.home, ".ssh", "prog")
	notProgram := filepath.Join(w.workdir, "notes.txt")
	for p, text := range map[string]string{hidden: "#!/bin/sh\nexit 0\n", notProgram: "no program\n"} {
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, prog string
		code       errcode.Code
		want       string
	}{
		{"hidden program", hidden, sandbox.CodeFailed, "may not be run inside the sandbox"},
		{"not a program", notProgram, procs.CommandStartFailed, fmt.Sprintf("cannot start %q: exec format error", notProgram)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Outside the sandbox the hidden one runs: the failure is the
			// sandbox's, not the program's.
			if tc.prog == hidden {
				if _, _, code := w.run(t, procs.Spec{Argv: []string{hidden}}, nil); code != 0 {
					t.Fatalf("unsandboxed: exit %d", code)
				}
			}
			pol := w.pol
			pol.Workdir = w.workdir
			p, err := procs.Start(procs.Spec{Argv: []string{tc.prog}, Dir: w.workdir, Sandbox: &pol}, nil, nil)
			if p != nil {
				p.Kill()
				t.Fatal("started")
			}
			if ec := errcode.As(err); ec.Code != tc.code || !strings.Contains(ec.Message, tc.want) {
				t.Fatalf("error %v, want %s %q", err, tc.code, tc.want)
			}
			t.Log(err)
		})
	}
}

// TestOwnFilesInWorkdir is finding 5 of issue #37: with hostlink's program
// and unit inside the workdir (a workdir of ~ after install.sh), a
// sandboxed command replaced the program and edited the unit. In both
// sandbox modes they stay readable and runnable and nothing changes them,
// and no directory holding one of hostlink's paths can be moved away to
// put another in its place. Each escape undoes itself where it succeeds,
// and succeeds unsandboxed, so that the test proves the sandbox.
func TestOwnFilesInWorkdir(t *testing.T) {
	for _, landlockOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("landlock_only=%v", landlockOnly), func(t *testing.T) {
			w := newWorld(t, true)
			if landlockOnly {
				sandbox.LandlockOnly(t)
			}
			t.Logf("%s", sandbox.Probe())
			bin := filepath.Join(w.workdir, ".local", "bin")
			program := filepath.Join(bin, "hostlink")
			unit := filepath.Join(w.workdir, ".config", "systemd", "user", "hostlink.service")
			dropIns := unit + ".d"
			mkdir(t, bin)
			mkdir(t, filepath.Dir(unit))
			write(t, program, "#!/bin/sh\necho PROGRAM\n")
			os.Chmod(program, 0o755)
			write(t, unit, "[Service]\nExecStart="+program+" serve\n")
			pol := w.pol
			pol.Guarded = []string{program, unit, dropIns}
			q := func(s string) string { return "'" + s + "'" }
			restore := func(f string) string { return " && printf '%s\\n' \"$orig\" > " + q(f) }
			escapes := []struct{ name, line string }{
				{"write the program", "orig=$(cat " + q(program) + ") && echo EVIL > " + q(program) + restore(program)},
				{"rename a file onto the program", "orig=$(cat " + q(program) + ") && echo EVIL > " + q(bin+"/x") + " && mv -f " + q(bin+"/x") + " " + q(program) + restore(program) + " && chmod 755 " + q(program)},
				{"remove the program", "orig=$(cat " + q(program) + ") && rm -f " + q(program) + restore(program) + " && chmod 755 " + q(program)},
				{"hard-link the program into the workdir", "ln " + q(program) + " hl && rm hl"},
				{"move the program's directory away", "mv " + q(bin) + " " + q(bin+".x") + " && mv " + q(bin+".x") + " " + q(bin)},
				{"edit the unit", "orig=$(cat " + q(unit) + ") && echo ExecStartPre=evil >> " + q(unit) + restore(unit)},
				{"move the unit's directory away", "mv " + q(filepath.Dir(unit)) + " " + q(filepath.Dir(unit)+".x") + " && mv " + q(filepath.Dir(unit)+".x") + " " + q(filepath.Dir(unit))},
				{"move the directory above hostlink's configuration away", "mv " + q(w.hostlink) + " " + q(w.hostlink+".x") + " && mv " + q(w.hostlink+".x") + " " + q(w.hostlink)},
			}
			if landlockOnly {
				// Landlock alone keeps every directory on the way to a
				// guarded name from getting entries. With namespaces a
				// name that does not exist yet has nothing to mount
				// over, and is left to the jail (DESIGN, "The command
				// sandbox", says why).
				escapes = append(escapes, struct{ name, line string }{"create a drop-in directory for the unit", "mkdir " + q(dropIns) + " && rmdir " + q(dropIns)})
			}
			for _, e := range escapes {
				t.Run(e.name, func(t *testing.T) {
					if _, errOut, code := w.run(t, sh(e.line), &pol); code == 0 {
						t.Errorf("sandboxed: exit 0 (%s): the sandbox let it through", errOut)
					}
					if _, errOut, code := w.run(t, sh(e.line), nil); code != 0 {
						t.Errorf("unsandboxed: exit %d, %q: the test does not prove the sandbox", code, errOut)
					}
				})
			}
			if b, _ := os.ReadFile(program); string(b) != "#!/bin/sh\necho PROGRAM\n" {
				t.Errorf("the program is now %q", b)
			}
			if b, _ := os.ReadFile(unit); !strings.HasPrefix(string(b), "[Service]\nExecStart=") || strings.Contains(string(b), "evil") {
				t.Errorf("the unit is now %q", b)
			}
			// Read and run, they still are.
			if out, errOut, code := w.run(t, sh(q(program)+" && cat "+q(unit)), &pol); code != 0 || !strings.HasPrefix(out, "PROGRAM\n[Service]") {
				t.Errorf("running the program and reading the unit: exit %d, %q, %q", code, out, errOut)
			}
			if !landlockOnly {
				// With namespaces, work beside them goes on as before.
				if _, errOut, code := w.run(t, sh("echo x > "+q(bin+"/other")+" && mv "+q(bin+"/other")+" "+q(bin+"/other2")+" && rm "+q(bin+"/other2")), &pol); code != 0 {
					t.Errorf("writing beside the program: %s", errOut)
				}
			}
		})
	}
}

// Where the machine's /tmp stays (a writable path holds it), the
// command's TMPDIR stays at its place, in hostlink's state directory,
// which is hidden all around it: the command uses its own directory, and
// reads neither hostlink's files nor another command's temporary files.
func TestTmpDirWhereTmpIsKept(t *testing.T) {
	w := newWorld(t, false)
	tmp, err := filepath.EvalSymlinks("/tmp")
	if err != nil {
		t.Fatal(err)
	}
	pol := w.pol
	pol.Writable = []string{tmp}
	// Another command's temporary directory, beside this one's.
	mkdir(t, filepath.Join(pol.TmpRoot, "cmd-other"))
	write(t, filepath.Join(pol.TmpRoot, "cmd-other", "f"), secret)
	out, errOut, code := w.run(t, sh(`echo x > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "$TMPDIR"`), &pol)
	root, _ := filepath.EvalSymlinks(pol.TmpRoot)
	if code != 0 || !strings.HasPrefix(out, "x\n"+root+"/cmd-") {
		t.Fatalf("exit %d, %q, %q: want TMPDIR below %s, usable", code, out, errOut, root)
	}
	for _, try := range []string{"ls " + pol.TmpRoot, "cat " + filepath.Join(pol.TmpRoot, "cmd-other", "f"), "cat " + filepath.Join(w.hostlink, "state", "token"), "ls " + filepath.Join(w.hostlink, "state")} {
		if out, errOut, code := w.run(t, sh(try), &pol); code == 0 || strings.Contains(out, secret) {
			t.Errorf("%s: exit %d, %q, %q", try, code, out, errOut)
		}
	}
}
