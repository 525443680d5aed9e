//go:build linux || darwin

package ipc

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/private"
	"github.com/hostlink/hostlink/internal/tstest"
)

// nobody returns the uid and gid of the user nobody: the other local user
// of these tests.
func nobody(t *testing.T) (uid, gid int) {
	t.Helper()
	tstest.Root(t)
	u, err := user.Lookup("nobody")
	if err != nil {
		tstest.Missing(t, "no user nobody")
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// sharedRuntimeDir is an XDG_RUNTIME_DIR that other users can write: in
// /tmp, so that they can reach it, with the given mode.
func sharedRuntimeDir(t *testing.T, mode fs.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "xdg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

func modeOf(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// TestListenRefusesSquattedRuntimeDir: in a shared XDG_RUNTIME_DIR another
// user made hostlink's runtime directory first, with a hostlink.sock.lock
// link to a file of ours. The daemon refuses to serve from there, with an
// error that says why, and neither follows the link nor changes the file.
func TestListenRefusesSquattedRuntimeDir(t *testing.T) {
	uid, gid := nobody(t)
	xdg := sharedRuntimeDir(t, 0o777|fs.ModeSticky)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("ours"), 0o644)

	squat := filepath.Join(xdg, "hostlink")
	os.Mkdir(squat, 0o777)
	os.Chmod(squat, 0o777)
	os.Chown(squat, uid, gid)
	lock := filepath.Join(squat, sockName+".lock")
	os.Symlink(victim, lock)
	os.Lchown(lock, uid, gid)

	addr, _ := Address(squat)
	ln, err := Listen(addr)
	if err == nil {
		ln.Close()
		t.Fatal("served from a runtime directory another user owns")
	}
	if !errors.Is(err, private.ErrNotPrivate) || !strings.Contains(err.Error(), "owned by uid "+strconv.Itoa(uid)) {
		t.Fatalf("error does not say why: %v", err)
	}
	t.Logf("refused: %v", err)
	if m := modeOf(t, victim); m.Perm() != 0o644 {
		t.Fatalf("the link's target changed mode to %v", m)
	}
	if m := modeOf(t, squat); m.Perm() != 0o777 {
		t.Fatalf("the other user's directory changed mode to %v", m)
	}
	if _, err := os.Lstat(addr); err == nil {
		t.Fatal("a socket was created in the other user's directory")
	}
}

// TestListenRuntimeDirParents: the runtime directory may sit in a shared
// directory that is sticky (/tmp, or an XDG_RUNTIME_DIR like it), where
// others cannot replace it, but not in one anyone can write without the
// sticky bit.
func TestListenRuntimeDirParents(t *testing.T) {
	nobody(t)
	t.Run("sticky", func(t *testing.T) {
		xdg := sharedRuntimeDir(t, 0o777|fs.ModeSticky)
		addr, _ := Address(filepath.Join(xdg, "hostlink"))
		ln, err := Listen(addr)
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		if m := modeOf(t, filepath.Dir(addr)); m.Perm() != 0o700 {
			t.Fatalf("runtime directory mode %v", m)
		}
	})
	t.Run("world-writable", func(t *testing.T) {
		xdg := sharedRuntimeDir(t, 0o777)
		addr, _ := Address(filepath.Join(xdg, "hostlink"))
		ln, err := Listen(addr)
		if err == nil {
			ln.Close()
			t.Fatal("served below a directory anyone can write")
		}
		if !errors.Is(err, private.ErrNotPrivate) || !strings.Contains(err.Error(), "without the sticky bit") {
			t.Fatalf("error does not say why: %v", err)
		}
		t.Logf("refused: %v", err)
	})
}

// TestDialRefusesImpostor: another user serves a fake daemon where the
// CLI looks for hostlink. Dial measures the server, refuses it before
// sending a byte (the fake server saw none), and never reads its forged
// answer.
func TestDialRefusesImpostor(t *testing.T) {
	uid, gid := nobody(t)
	xdg := sharedRuntimeDir(t, 0o777|fs.ModeSticky)
	squat := filepath.Join(xdg, "hostlink")
	os.Mkdir(squat, 0o777)
	os.Chmod(squat, 0o777)
	os.Chown(squat, uid, gid)
	exe, _ := os.Executable()
	child := filepath.Join(xdg, "fake.test")
	copyFile(t, exe, child)

	addr, _ := Address(squat)
	fake := exec.Command(child, "-test.run=^$")
	fake.Env = append(os.Environ(), fakeServerEnv+"="+addr)
	fake.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, _ := fake.StdoutPipe()
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Process.Kill(); fake.Wait() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("fake server: %q", lines.Text())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Connect(ctx, addr)
	if err == nil {
		cl.Close()
		t.Fatal("connected to another user's server")
	}
	if !errors.Is(err, ErrImpostor) || !strings.Contains(err.Error(), "uid "+strconv.Itoa(uid)) {
		t.Fatalf("error does not say why: %v", err)
	}
	t.Logf("refused: %v", err)
	if !lines.Scan() || lines.Text() != "0" {
		t.Fatalf("the fake server received %q bytes, want 0", lines.Text())
	}
}
