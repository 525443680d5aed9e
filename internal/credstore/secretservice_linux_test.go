package credstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needTool finds a program the integration test needs: missing, it skips
// unless HOSTLINK_REQUIRE_INTEGRATION=1, where it fails.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("HOSTLINK_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("%s is required (HOSTLINK_REQUIRE_INTEGRATION=1): install it (apt packages dbus, gnome-keyring)", name)
		}
		t.Skipf("%s not installed (apt packages dbus, gnome-keyring)", name)
	}
	return p
}

// startSecretService runs a private D-Bus session bus and an unlocked
// gnome-keyring on it, with all their files under a temp dir, and points
// this process's DBUS_SESSION_BUS_ADDRESS at the bus.
func startSecretService(t *testing.T) {
	t.Helper()
	dbusDaemon := needTool(t, "dbus-daemon")
	gk := needTool(t, "gnome-keyring-daemon")
	dir := t.TempDir()
	// A bus without service activation: the stock session bus would start
	// its own (locked) gnome-keyring on the first Secret Service call and
	// race the one started here.
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

	home := filepath.Join(dir, "home")
	run := filepath.Join(dir, "run")
	for _, d := range []string{home, run} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	kr := exec.Command(gk, "--foreground", "--unlock", "--components=secrets")
	kr.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
		"XDG_RUNTIME_DIR="+run, "DBUS_SESSION_BUS_ADDRESS="+addr)
	kr.Stdin = strings.NewReader("test-keyring-password")
	var stderr bytes.Buffer
	kr.Stderr = &stderr
	if err := kr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kr.Process.Kill(); kr.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := probe(osKeyring{}, DefaultService)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			kr.Process.Kill()
			kr.Wait()
			t.Fatalf("gnome-keyring did not come up: %v\n%s", err, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestSecretService(t *testing.T) {
	startSecretService(t)
	ctx := context.Background()
	dir := t.TempDir()
	// Even with a passphrase set, a reachable keychain wins.
	s, err := Open(Options{StateDir: dir, Service: "hostlink-test", Getenv: env(map[string]string{
		"DBUS_SESSION_BUS_ADDRESS": os.Getenv("DBUS_SESSION_BUS_ADDRESS"), PassphraseEnv: "unused"})})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != Keychain || !strings.Contains(s.Describe(), "Secret Service") {
		t.Fatalf("backend %s (%s)", s.Backend(), s.Describe())
	}
	secret := []byte(`{"access_token":"a-7b1f","refresh_token":"r-99c2"}`)
	if err := s.Set(ctx, "platform", secret); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "platform")
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("get: %q %v", got, err)
	}
	// The same item seen through a second client (another process would
	// do the same): the keychain, not memory, holds it.
	v, err := osKeyring{}.Get("hostlink-test", "platform")
	if err != nil || v != string(secret) {
		t.Fatalf("direct get: %q %v", v, err)
	}
	for range 2 {
		if err := s.Delete(ctx, "platform"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(ctx, "platform"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the keychain backend wrote to the state dir: %v", entries)
	}
}

func TestNoSessionBus(t *testing.T) {
	_, err := Open(Options{StateDir: t.TempDir(), Getenv: env(nil)})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "DBUS_SESSION_BUS_ADDRESS") {
		t.Fatalf("err = %v", err)
	}
}
