package sandbox_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/tstest"
)

// squatKinds are what another user can leave at a name in a shared
// directory before hostlink gets there.
var squatKinds = []string{"dir-0777", "dir-0700", "symlink", "fifo"}

// squat makes kind at path (as whoever runs it).
func squat(kind, path string) error {
	switch kind {
	case "dir-0777":
		if err := os.Mkdir(path, 0o777); err != nil {
			return err
		}
		return os.Chmod(path, 0o777)
	case "dir-0700":
		return os.Mkdir(path, 0o700)
	case "symlink":
		return os.Symlink(filepath.Dir(path), path)
	case "fifo":
		return syscall.Mkfifo(path, 0o666)
	}
	return fmt.Errorf("unknown squat %q", kind)
}

// otherUser is a user that is not this one: nobody, whose squats are made
// by the test binary started as that user.
type otherUser struct {
	uid, gid int
	exe      string // a copy of the test binary it may run
}

func newOtherUser(t *testing.T) otherUser {
	t.Helper()
	tstest.Root(t) // it starts a process as another user
	u, err := user.Lookup("nobody")
	if err != nil {
		tstest.Missing(t, "no user nobody")
	}
	o := otherUser{}
	o.uid, _ = strconv.Atoi(u.Uid)
	o.gid, _ = strconv.Atoi(u.Gid)
	// The test binary may sit in a directory the other user cannot enter.
	dir := sharedDir(t, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.exe = filepath.Join(dir, "sandbox.test")
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(o.exe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
	return o
}

// sharedDir is a new directory of mode perm that other users can reach.
func sharedDir(t *testing.T, perm os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hostlink-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	return dir
}

// squat has the other user make kind at path; it returns the error the
// other user got.
func (o otherUser) squat(t *testing.T, kind, path string) error {
	t.Helper()
	cmd := exec.Command(o.exe, kind, path)
	cmd.Env = append(os.Environ(), helperEnv+"=squat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(o.uid), Gid: uint32(o.gid)}}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// Another user squats every name the sandbox used to put its temporary
// directories under, in a shared sticky TMPDIR (a 0777 or a 0700
// directory, a symbolic link, a FIFO), and the one it uses now where it
// could: the sandbox keeps working, confined, with its temporary
// directories where only the user can create names; and where someone
// else did make that name first, every command is refused, none runs
// unconfined.
func TestSquattedByAnotherUser(t *testing.T) {
	w := newWorld(t, false)
	other := newOtherUser(t)
	// The other user can reach hostlink's state directory (0700) to try.
	for d := filepath.Dir(filepath.Join(w.hostlink, "state")); d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	t.Logf("uid %d, the other user %d; %s", os.Getuid(), other.uid, sandbox.Probe())
	for _, kind := range squatKinds {
		t.Run(kind, func(t *testing.T) {
			shared := sharedDir(t, 0o777|os.ModeSticky)
			t.Setenv("TMPDIR", shared)
			old := filepath.Join(shared, "hostlink-sandbox-"+strconv.Itoa(os.Getuid()))
			if err := other.squat(t, kind, old); err != nil {
				t.Fatalf("squatting the old name: %v", err)
			}
			// hostlink's state directory is the user's alone.
			if err := other.squat(t, kind, filepath.Join(w.hostlink, "state", "x")); err == nil {
				t.Fatal("the other user created a name in hostlink's state directory")
			}
			// The probe and a command do not care about the old name.
			if st := sandbox.ProbeAgain(); st.Mode != sandbox.Workdir {
				t.Fatalf("probe with %s squatted: %s", old, st)
			}
			out, errOut, code := w.run(t, sh(`echo "$TMPDIR" && echo x > "$TMPDIR/f" && cat "$TMPDIR/f"`), &w.pol)
			if code != 0 || !strings.HasSuffix(out, "\nx\n") {
				t.Fatalf("exit %d, %q, %q: the command could not use its TMPDIR", code, out, errOut)
			}
			if _, _, code := w.run(t, sh("cat "+w.secrets[0]), &w.pol); code == 0 {
				t.Fatal("the command read a hidden file: it ran unconfined")
			}
			if tmp := strings.TrimSpace(out); strings.HasPrefix(tmp, shared) {
				t.Fatalf("TMPDIR %s is in the shared directory", tmp)
			}
			// A root for the temporary directories in a shared place,
			// where the other user made the name first: refused.
			pol := w.pol
			pol.TmpRoot = filepath.Join(shared, "hostlink-tmp")
			if err := other.squat(t, kind, pol.TmpRoot); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(w.workdir, "ran-"+kind)
			pol.Workdir = w.workdir
			p, err := procs.Start(procs.Spec{Command: "touch " + marker, Shell: "sh", Dir: w.workdir, Sandbox: &pol}, nil, nil)
			if p != nil {
				p.Wait()
			}
			if err == nil || !strings.Contains(err.Error(), "SANDBOX_FAILED") || !strings.Contains(err.Error(), pol.TmpRoot) {
				t.Fatalf("err %v, want SANDBOX_FAILED naming %s", err, pol.TmpRoot)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran")
			}
			t.Log(err)
		})
	}
}

// The directory that holds the commands' temporary directories must be a
// real, private directory of the user's in a place nobody else can
// replace: anything else fails the sandbox, and the command does not run.
func TestTmpRootMustBePrivate(t *testing.T) {
	w := newWorld(t, false)
	for _, tc := range []struct {
		name string
		make func(root string) error
		ok   bool
	}{
		{"missing: created", func(string) error { return nil }, true},
		{"private directory", func(root string) error { return os.Mkdir(root, 0o700) }, true},
		{"open to others", func(root string) error { return squat("dir-0777", root) }, false},
		{"readable by others", func(root string) error {
			if err := os.Mkdir(root, 0o755); err != nil {
				return err
			}
			return os.Chmod(root, 0o755)
		}, false},
		{"symbolic link to a private directory", func(root string) error {
			target := root + "-target"
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
			return os.Symlink(target, root)
		}, false},
		{"fifo", func(root string) error { return squat("fifo", root) }, false},
		{"file", func(root string) error { return os.WriteFile(root, nil, 0o600) }, false},
		{"in a directory others can write to", func(root string) error {
			return os.Chmod(filepath.Dir(root), 0o777)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(parent, 0o700); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(parent, "sandbox")
			if err := tc.make(root); err != nil {
				t.Fatal(err)
			}
			pol := w.pol
			pol.Workdir, pol.TmpRoot = w.workdir, root
			marker := filepath.Join(w.workdir, "ran")
			os.Remove(marker)
			var out strings.Builder
			p, err := procs.Start(procs.Spec{Command: `touch ` + marker + ` && echo x > "$TMPDIR/f" && cat "$TMPDIR/f"`, Shell: "sh", Dir: w.workdir, Sandbox: &pol}, &out, nil)
			if !tc.ok {
				if p != nil {
					p.Wait()
				}
				if err == nil || !strings.Contains(err.Error(), "SANDBOX_FAILED") {
					t.Fatalf("err %v, want SANDBOX_FAILED", err)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Fatal("the command ran")
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st, _ := p.Wait(); st.ExitCode != 0 || out.String() != "x\n" {
				t.Fatalf("exit %d, %q", st.ExitCode, out.String())
			}
			fi, err := os.Lstat(root)
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Fatalf("root %v %v, want a 0700 directory", fi, err)
			}
			// The command's own directory is gone with it.
			<-p.Tidied()
			if left, _ := os.ReadDir(root); len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

// A user other than root gets the full sandbox too, namespaces and all
// (the launcher keeps the capabilities it needs in its namespace across
// its exec, then drops them), not Landlock alone: the escapes fail, and
// hidden paths outside /tmp are covered with mounts.
func TestSandboxAsAnotherUser(t *testing.T) {
	if sandbox.Probe().Mechanism != sandbox.MechNamespaces {
		tstest.Missing(t, "no user namespaces here")
	}
	other := newOtherUser(t)
	// Outside /tmp, which the sandbox replaces, so that the hidden paths
	// stay where the command sees them.
	// Short: the test worlds' control sockets are below it.
	base, err := os.MkdirTemp("/var/tmp", "h")
	if err != nil {
		tstest.Missing(t, "no /var/tmp: "+err.Error())
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	home, tmp := filepath.Join(base, "home"), base
	for _, d := range []string{base, home} {
		os.MkdirAll(d, 0o700)
		if err := os.Chown(d, other.uid, other.gid); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(other.exe, "-test.run=^(TestEscapesFail|TestTmpDirWhereTmpIsKept|TestPidAndExitCode)$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+tmp, "XDG_CACHE_HOME=")
	cmd.Dir = base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(other.uid), Gid: uint32(other.gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: %v\n%s", other.uid, err, out)
	}
	if want := fmt.Sprintf("uid %d, workdir via %s", other.uid, sandbox.MechNamespaces); !strings.Contains(string(out), want) {
		t.Fatalf("as uid %d the sandbox was not %q:\n%s", other.uid, want, out)
	}
	t.Logf("as uid %d:\n%s", other.uid, out)
}
