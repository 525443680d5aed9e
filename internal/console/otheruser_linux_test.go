package console_test

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// getEnv makes this test binary a client that GETs the URL it names,
// without following redirects, and prints the status and whether a
// session cookie came back.
const getEnv = "HOSTLINK_CONSOLE_TEST_GET"

func init() {
	if u := os.Getenv(getEnv); u != "" {
		resp, err := noRedirect.Get(u)
		if err != nil {
			fmt.Println("get:", err)
			os.Exit(1)
		}
		fmt.Println(resp.StatusCode, strings.Contains(resp.Header.Get("Set-Cookie"), "hostlink_console="))
		os.Exit(0)
	}
}

// TestLoginLinkOfAnotherUser: the login link reaches the browser as an
// argument of the opener, which another local user can read; opened by
// that user (measured by the kernel on the loopback connection) it logs
// nobody in, and it is used up, so the user's own browser is told, not
// logged in after an intruder.
func TestLoginLinkOfAnotherUser(t *testing.T) {
	tstest.Root(t)
	u, err := user.Lookup("nobody")
	if err != nil {
		tstest.Missing(t, "no user nobody")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	d, _ := serveDaemon(t)
	// The build directory is private to this user: the other one runs a
	// copy.
	dir, err := os.MkdirTemp("", "console")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "client.test")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	get := func(link string, cred *syscall.Credential) string {
		t.Helper()
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), getEnv+"="+link)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("client: %v %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	l, err := d.ConsoleLogin()
	if err != nil {
		t.Fatal(err)
	}
	if got := get(l.URL, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}); got != "401 false" {
		t.Errorf("the link opened by nobody: %q, want 401 and no session", got)
	}
	if got := get(l.URL, nil); got != "401 false" {
		t.Errorf("the same link opened by the user after: %q, want it used up", got)
	}
	l, _ = d.ConsoleLogin()
	if got := get(l.URL, nil); got != "303 true" {
		t.Errorf("a new link opened by the user: %q, want a session", got)
	}
}
