// Package sstest starts a real Secret Service for tests: a private D-Bus
// session bus (without service activation) and an unlocked gnome-keyring
// on it, with every file under a test's temp dir.
package sstest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
)

// Service is a running Secret Service.
type Service struct {
	// Address is the bus address (for DBUS_SESSION_BUS_ADDRESS).
	Address string
	// DataDir holds the keyring files gnome-keyring writes.
	DataDir string
}

// Start runs the bus and gnome-keyring until the test ends. ready probes
// the service (with DBUS_SESSION_BUS_ADDRESS set in this process) and
// returns nil once it answers. Without dbus-daemon or gnome-keyring-daemon
// the test is skipped, or fails when HOSTLINK_REQUIRE_INTEGRATION=1.
func Start(t testing.TB, ready func() error) *Service {
	t.Helper()
	dbusDaemon := need(t, "dbus-daemon")
	gk := need(t, "gnome-keyring-daemon")
	dir := t.TempDir()
	// Without service activation: the stock session bus would start its own
	// (locked) gnome-keyring on the first Secret Service call and race ours.
	conf := filepath.Join(dir, "bus.conf")
	err := os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=`+filepath.Join(dir, "bus")+`</listen>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	bus := exec.Command(dbusDaemon, "--config-file="+conf, "--nofork", "--nopidfile", "--print-address=1")
	out, err := bus.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Process.Kill(); bus.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	addr = strings.TrimSpace(addr)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)

	home, run := filepath.Join(dir, "home"), filepath.Join(dir, "run")
	for _, d := range []string{home, run} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(home, ".local", "share")
	kr := exec.Command(gk, "--foreground", "--unlock", "--components=secrets")
	kr.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+data, "XDG_RUNTIME_DIR="+run, "DBUS_SESSION_BUS_ADDRESS="+addr)
	kr.Stdin = strings.NewReader("test-keyring-password")
	stderr := &lockedBuffer{}
	kr.Stderr = stderr
	if err := kr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kr.Process.Kill(); kr.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := ready()
		if err == nil {
			return &Service{Address: addr, DataDir: data}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gnome-keyring did not come up: %v\n%s", err, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// need is name's path (from the apt packages dbus-daemon and
// gnome-keyring), or ends the test through tstest.Tool.
func need(t testing.TB, name string) string {
	t.Helper()
	return tstest.Tool(t, name)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
