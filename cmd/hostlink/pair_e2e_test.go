package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/credstore/sstest"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/doctor"
)

// pairEnv is a hostlink environment that keeps its credentials in the
// encrypted file (no session keychain is touched) under its own homes.
func pairEnv(t *testing.T) (hlHome, home string, env []string) {
	hlHome, env = hostlinkEnv(t)
	home = t.TempDir()
	var clean []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") && !strings.HasPrefix(kv, "HOSTLINK_PLATFORM_TOKEN=") && !strings.HasPrefix(kv, "XDG_") {
			clean = append(clean, kv)
		}
	}
	clean = append(clean, "HOME="+home, "USERPROFILE="+home, "KEYCHAIN_PASSPHRASE=e2e passphrase", "HOSTLINK_CREDENTIAL_BACKEND=encrypted-file")
	return hlHome, home, clean
}

// pairCLI runs `hostlink pair --no-browser` and plays the browser: it
// follows the printed sign-in URL through the platform's redirect to the
// callback.
func pairCLI(t *testing.T, bin string, env []string, origin string) string {
	t.Helper()
	cmd := exec.Command(bin, "pair", "--platform", origin, "--no-browser", "--timeout", "30s")
	cmd.Env = env
	stderr, _ := cmd.StderrPipe()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var authURL string
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, origin+devplatform.AuthorizePath) {
			authURL = l
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if authURL == "" {
		cmd.Wait()
		t.Fatal("pair printed no sign-in URL")
	}
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "hostlink is paired") {
		t.Fatalf("callback page %d: %s", resp.StatusCode, page)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pair: %v", err)
	}
	return stdout.String()
}

func doctorJSON(t *testing.T, bin string, env []string, args ...string) (*doctor.Report, error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"doctor", "--json"}, args...)...)
	cmd.Env = env
	out, err := cmd.Output()
	var r doctor.Report
	if jerr := json.Unmarshal(out, &r); jerr != nil {
		t.Fatalf("doctor --json: %v\n%s", jerr, out)
	}
	return &r, err
}

func check(r *doctor.Report, name string) doctor.Check {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return doctor.Check{}
}

// Not parallel: the Secret Service's bus is set in the environment (sstest).
func TestPairServeRefreshUnpair(t *testing.T) {
	bin := build(t)
	t.Run("encrypted-file", func(t *testing.T) { pairServeRefreshUnpair(t, bin, false) })
	if runtime.GOOS == "linux" {
		t.Run("secret-service", func(t *testing.T) { pairServeRefreshUnpair(t, bin, true) })
	}
}

// pairServeRefreshUnpair pairs through the CLI, serves with the stored
// token through a forced refresh, checks doctor, install and that no token
// was written anywhere, then unpairs. With keychain set the tokens live in
// a real Secret Service (gnome-keyring) instead of the encrypted file.
func pairServeRefreshUnpair(t *testing.T, bin string, keychain bool) {
	p := startPlatform(t, devplatform.Config{})
	origin := "http" + strings.TrimPrefix(strings.TrimSuffix(p.url, devplatform.ControlPath), "ws")
	hlHome, home, env := pairEnv(t)
	scanRoots := []string{hlHome, home}
	wantBackend := "encrypted file"
	if keychain {
		keychainOnly := func(k string) string {
			if k == credstore.BackendEnv {
				return string(credstore.Keychain)
			}
			return os.Getenv(k)
		}
		ss := sstest.Start(t, func() error {
			_, err := credstore.Open(credstore.Options{StateDir: t.TempDir(), Getenv: keychainOnly})
			return err
		})
		var kept []string
		for _, kv := range env {
			if !strings.HasPrefix(kv, "KEYCHAIN_PASSPHRASE=") && !strings.HasPrefix(kv, credstore.BackendEnv+"=") {
				kept = append(kept, kv)
			}
		}
		env = append(kept, "DBUS_SESSION_BUS_ADDRESS="+ss.Address, credstore.BackendEnv+"=keychain")
		scanRoots = append(scanRoots, ss.DataDir)
		wantBackend = "OS keychain (Secret Service)"
		t.Cleanup(func() {
			st, err := credstore.Open(credstore.Options{StateDir: t.TempDir(), Getenv: keychainOnly})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := st.Get(context.Background(), "platform"); !errors.Is(err, credstore.ErrNotFound) {
				t.Errorf("after unpair the keychain still answers: %v", err)
			}
		})
	}
	os.MkdirAll(filepath.Join(hlHome, "config"), 0o700)
	os.WriteFile(filepath.Join(hlHome, "config", "config.toml"), []byte("[log]\nlevel = \"debug\"\n"+allowPolicy), 0o600)

	out := pairCLI(t, bin, env, origin)
	if !strings.Contains(out, "Paired with "+origin) || !strings.Contains(out, wantBackend) {
		t.Fatalf("pair said %q", out)
	}

	// The link connects with the stored token.
	since := time.Now()
	serve, _ := startServe(t, bin, env, "--platform", p.url)
	waitPeer(t, p, devplatform.ControlPeer, since)

	// A forced 401: the platform forgets its access tokens and drops the
	// connection; hostlink refreshes and reconnects.
	p.ExpireAccessTokens()
	since = time.Now()
	p.Peer(devplatform.ControlPeer).Close(1011, "restart")
	waitPeer(t, p, devplatform.ControlPeer, since)

	// Doctor on this healthy setup.
	r, err := doctorJSON(t, bin, env)
	if err != nil || !r.OK || r.Failures != 0 {
		t.Fatalf("doctor on a healthy setup: %v %+v", err, r)
	}
	for name, want := range map[string]doctor.Status{"config": doctor.OK, "credential store": doctor.OK, "pairing": doctor.OK,
		"platform link": doctor.OK, "control channel": doctor.OK, "state dir": doctor.OK, "audit log": doctor.OK, "workdir workspace": doctor.OK} {
		if c := check(r, name); c.Status != want {
			t.Errorf("doctor %s: %+v, want %s", name, c, want)
		}
	}
	if c := check(r, "autostart"); c.Status != doctor.Warn || c.Fix == "" {
		t.Errorf("doctor autostart before install: %+v", c)
	}
	// The test's binary is in the temporary directory, which install
	// refuses (TestInstallRefusesATemporaryBinary): here another one is.
	tmp := filepath.Join(hlHome, "tmp")
	instEnv := append(env[:len(env):len(env)], "TMPDIR="+tmp, "TMP="+tmp, "TEMP="+tmp)
	if out, err := run(t, instEnv, bin, "install", "--platform", p.url); err != nil || !strings.Contains(out, "Wrote") {
		t.Fatalf("install: %v %s", err, out)
	}
	if out, err := run(t, instEnv, bin, "install", "--platform", p.url); err != nil || !strings.Contains(out, "already up to date") {
		t.Fatalf("second install: %v %s", err, out)
	}
	r, _ = doctorJSON(t, bin, env)
	if c := check(r, "autostart"); c.Status != doctor.OK {
		t.Errorf("doctor autostart after install: %+v", c)
	}
	stop(t, serve)

	audit, err := os.ReadFile(filepath.Join(hlHome, "audit", "audit.log"))
	if err != nil || !bytes.Contains(audit, []byte(`"token_refreshed"`)) {
		t.Fatalf("the audit log has no token_refreshed record: %v", err)
	}
	if log, err := os.ReadFile(filepath.Join(hlHome, "logs", "hostlink.log")); err != nil || !bytes.Contains(log, []byte("refreshing")) {
		t.Fatalf("the debug log does not show the refresh: %v", err)
	}

	// No token, access or refresh, current or spent, is in any file hostlink
	// wrote: logs, audit, state (the encrypted file included), config, units.
	tokens := p.IssuedTokens()
	if len(tokens) < 4 {
		t.Fatalf("only %d tokens issued", len(tokens))
	}
	scanned := 0
	for _, root := range scanRoots {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path == bin {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return nil
			}
			scanned++
			for _, tok := range tokens {
				if bytes.Contains(b, []byte(tok)) {
					t.Errorf("%s holds a token", path)
				}
			}
			return nil
		})
	}
	if scanned < 5 {
		t.Fatalf("only %d files scanned", scanned)
	}

	// Unpair revokes at the platform and removes everything locally.
	if out, err := run(t, env, bin, "unpair"); err != nil || !strings.Contains(out, "Revoked") {
		t.Fatalf("unpair: %v %s", err, out)
	}
	if a, rt := p.OAuthTokens(); a != 0 || rt != 0 {
		t.Fatalf("after unpair the platform holds %d access and %d refresh tokens", a, rt)
	}
	if _, err := os.Stat(filepath.Join(hlHome, "state", "tokens.enc")); !os.IsNotExist(err) {
		t.Fatalf("tokens.enc is still there: %v", err)
	}
	if out, err := run(t, env, bin, "unpair"); err != nil || !strings.Contains(out, "not paired") {
		t.Fatalf("second unpair: %v %s", err, out)
	}
	for range 2 {
		if out, err := run(t, env, bin, "uninstall"); err != nil || !strings.Contains(out, "systemctl --user stop") && runtime.GOOS == "linux" {
			t.Fatalf("uninstall: %v %s", err, out)
		}
	}
	// Without a token the link does not start.
	if out, err := run(t, env, bin, "serve", "--listen", "127.0.0.1:0", "--platform", p.url); err == nil || !strings.Contains(out, "not paired") {
		t.Fatalf("serve without a pairing: %v %s", err, out)
	}
}

func TestPairDeviceCLI(t *testing.T) {
	t.Parallel()
	bin := build(t)
	p := startPlatform(t, devplatform.Config{})
	p.SetOAuthConfig(devplatform.OAuthConfig{DeviceInterval: 1})
	origin := "http" + strings.TrimPrefix(strings.TrimSuffix(p.url, devplatform.ControlPath), "ws")
	_, _, env := pairEnv(t)
	cmd := exec.Command(bin, "pair", "--platform", p.url, "--device", "--timeout", "30s")
	cmd.Env = env
	stderr, _ := cmd.StderrPipe()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	code := ""
	for sc.Scan() {
		if _, c, ok := strings.Cut(sc.Text(), "enter the code"); ok {
			code = strings.TrimSpace(c)
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if code == "" {
		t.Fatal("no user code printed")
	}
	if err := p.ApproveDevice(code, true); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(stdout.String(), "Paired with "+origin) {
		t.Fatalf("pair --device: %v %s", err, stdout.String())
	}
	since := time.Now()
	startServe(t, bin, env, "--platform", p.url)
	waitPeer(t, p, devplatform.ControlPeer, since)
}

func TestDoctorBrokenSetup(t *testing.T) {
	t.Parallel()
	bin := build(t)
	hlHome, _, env := pairEnv(t)
	cfgDir := filepath.Join(hlHome, "config")
	os.MkdirAll(cfgDir, 0o700)
	missing := filepath.Join(hlHome, "gone")
	cfg := "[[workdirs]]\nalias = \"notes\"\npath = \"" + filepath.ToSlash(missing) + "\"\nagent_mode = \"read-only\"\n\n" +
		"[link]\nurl = \"ws://127.0.0.1:9/ws/local-executor\"\n\n[agents]\nenabled = true\nruntimes = [\"codex\"]\n"
	env = append(env, "PATH="+t.TempDir()) // no agent CLI on PATH
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600)
	if runtime.GOOS != "windows" {
		os.MkdirAll(filepath.Join(hlHome, "state"), 0o700)
		os.Chmod(filepath.Join(hlHome, "state"), 0o755) // readable by others
	}
	r, err := doctorJSON(t, bin, env)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("doctor exit: %v", err)
	}
	if r.OK || r.Failures == 0 {
		t.Fatalf("doctor on a broken setup: %+v", r)
	}
	wantFail := []string{"workdir notes", "pairing", "platform link"}
	if runtime.GOOS != "windows" {
		wantFail = append(wantFail, "state dir")
	}
	for _, name := range wantFail {
		if c := check(r, name); c.Status != doctor.Fail || c.Fix == "" {
			t.Errorf("doctor %s: %+v, want FAIL with a fix", name, c)
		}
	}
	if c := check(r, "agent runtime codex"); c.Status != doctor.Warn || !strings.Contains(c.Detail, "not on PATH") {
		t.Errorf("doctor agent runtime: %+v", c)
	}
	// A config that does not parse stops doctor at the first line.
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("[limits]\nmax_read_bytez = 1\n"), 0o600)
	r, _ = doctorJSON(t, bin, env)
	if c := check(r, "config"); c.Status != doctor.Fail || !strings.Contains(c.Detail, "max_read_bytez") {
		t.Fatalf("doctor config: %+v", c)
	}
	// Text output: one line per check with its status first (the build's
	// version line comes before the config's).
	out, _ := run(t, env, bin, "doctor")
	if !regexp.MustCompile(`(?m)^FAIL  config `).MatchString(out) || !strings.Contains(out, "fix: ") {
		t.Fatalf("doctor text: %s", out)
	}
}
