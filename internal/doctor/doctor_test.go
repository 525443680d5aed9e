package doctor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/private"
	"github.com/hostlink/hostlink/internal/update/updatetest"
	"github.com/hostlink/hostlink/internal/version"
)

func TestDirsAndWorkdirs(t *testing.T) {
	hl := t.TempDir()
	t.Setenv("HOSTLINK_HOME", hl)
	t.Setenv("HOME", t.TempDir())
	for _, d := range []string{"config", "state", "logs", "audit"} {
		if err := private.MkdirAll(filepath.Join(hl, d)); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(hl, "a-file")
	os.WriteFile(file, nil, 0o600)
	ro := t.TempDir()
	rw := t.TempDir()
	cfg := "[[workdirs]]\nalias = \"file\"\npath = \"" + filepath.ToSlash(file) + "\"\n\n" +
		"[[workdirs]]\nalias = \"ro\"\npath = \"" + filepath.ToSlash(ro) + "\"\nread_only = true\n\n" +
		"[[workdirs]]\nalias = \"rw\"\npath = \"" + filepath.ToSlash(rw) + "\"\n"
	os.WriteFile(filepath.Join(hl, "config", "config.toml"), []byte(cfg), 0o600)
	os.WriteFile(filepath.Join(hl, "audit", "audit.log"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(hl, "state", "audit.head"), nil, 0o644)
	r := Run(context.Background(), Options{Getenv: func(k string) string {
		return map[string]string{"KEYCHAIN_PASSPHRASE": "p", "HOSTLINK_CREDENTIAL_BACKEND": "encrypted-file"}[k]
	}})
	want := map[string]Status{"version": OK, "workdir file": Fail, "workdir ro": OK, "workdir rw": OK, "state dir": OK, "credential store": OK, "pairing": OK, "platform link": OK}
	if runtime.GOOS != "windows" {
		want["audit log"] = Fail
		want["audit head"] = Fail
	}
	got := map[string]Check{}
	for _, c := range r.Checks {
		got[c.Name] = c
	}
	for name, st := range want {
		c := got[name]
		if c.Status != st || (st != OK && c.Fix == "") {
			t.Errorf("%s: %+v, want %s", name, c, st)
		}
	}
	if c := got["version"]; c.Detail != "hostlink "+version.Get().Summary() {
		t.Errorf("version detail %q", c.Detail)
	}
	if c := got["workdir rw"]; !strings.Contains(c.Detail, "read-write, case-") {
		t.Errorf("rw detail %q", c.Detail)
	}
	if c := got["workdir ro"]; !strings.Contains(c.Detail, "read-only") {
		t.Errorf("ro detail %q", c.Detail)
	}
	if runtime.GOOS != "windows" && !strings.Contains(got["audit log"].Fix, "chmod 600") {
		t.Errorf("audit log fix %q", got["audit log"].Fix)
	}
	if r.OK || r.Failures != len(filterStatus(r, Fail)) || r.Warnings != len(filterStatus(r, Warn)) {
		t.Errorf("counts: %+v", r)
	}
	var b bytes.Buffer
	Print(&b, r)
	if !strings.Contains(b.String(), "FAIL  workdir file") || !strings.Contains(b.String(), "fix: ") {
		t.Errorf("printed:\n%s", b.String())
	}
}

func filterStatus(r *Report, st Status) []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.Status == st {
			out = append(out, c)
		}
	}
	return out
}

// TestFixesNameTheConfigKey: a problem the configuration can fix gets a fix
// naming the exact key and the file, and every concern is reported once.
func TestFixesNameTheConfigKey(t *testing.T) {
	tests := []struct {
		name, cfg string
		check     string
		keys      []string
	}{
		{"missing workdir", "[[workdirs]]\nalias = \"gone\"\npath = \"GONE\"\n", "workdir gone", []string{"[[workdirs]]", `alias = "gone"`, "path = GONE"}},
		{"sandbox off", "[commands]\nenabled = true\nsandbox = \"off\"\n", "sandbox", []string{`[commands] sandbox = "workdir"`}},
		{"agent CLI missing", "[agents]\nenabled = true\nruntimes = [\"codex\"]\n\n[[workdirs]]\nalias = \"w\"\npath = \"WS\"\nagent_mode = \"read-only\"\n",
			"agent runtime codex", []string{`"codex"`, "[agents] runtimes"}},
		{"bad link url", "[link]\nurl = \"http://example.com/link\"\n", "platform link", []string{"[link] url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hl := t.TempDir()
			t.Setenv("HOSTLINK_HOME", hl)
			t.Setenv("HOME", t.TempDir())
			t.Setenv("PATH", t.TempDir()) // no agent CLI on it
			private.MkdirAll(filepath.Join(hl, "config"))
			cfgPath := filepath.Join(hl, "config", "config.toml")
			// GONE is an absolute directory that does not exist, on any OS.
			gone := filepath.ToSlash(filepath.Join(t.TempDir(), "no-such-dir"))
			cfg := strings.NewReplacer("WS", filepath.ToSlash(t.TempDir()), "GONE", gone).Replace(tt.cfg)
			for i, k := range tt.keys {
				// As TOML (and Go) quote it: a Windows path's backslashes
				// are escaped.
				tt.keys[i] = strings.ReplaceAll(k, "GONE", strconv.Quote(filepath.FromSlash(gone)))
			}
			if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			r := Run(context.Background(), Options{Getenv: func(k string) string {
				return map[string]string{"KEYCHAIN_PASSPHRASE": "p", "HOSTLINK_CREDENTIAL_BACKEND": "encrypted-file"}[k]
			}})
			seen := map[string]int{}
			var got *Check
			for i, c := range r.Checks {
				seen[c.Name]++
				if c.Name == tt.check {
					got = &r.Checks[i]
				}
			}
			for name, n := range seen {
				if n > 1 {
					t.Errorf("%s reported %d times: %+v", name, n, r.Checks)
				}
			}
			if got == nil || got.Status == OK {
				t.Fatalf("no problem reported for %s: %+v", tt.check, r.Checks)
			}
			for _, k := range append(tt.keys, cfgPath) {
				if !strings.Contains(got.Fix, k) {
					t.Errorf("%s: fix %q does not name %s", tt.check, got.Fix, k)
				}
			}
		})
	}
}

// TestUpdateCheck: off by default; on, a newer signed release is a
// warning naming it and how to update, the same release is OK, and a
// release signed by another key than the configured one is a warning.
func TestUpdateCheck(t *testing.T) {
	defer func(v string) { version.Version = v }(version.Version)
	version.Version = "1.0.0"
	newer, newerSigners := updatetest.Release(t, "999.0.0")
	_, otherSigners := updatetest.Release(t, "999.0.0")
	same, sameSigners := updatetest.Release(t, "1.0.0")
	for _, tt := range []struct {
		name, cfg string
		st        Status
		detail    string
	}{
		{"default", "", OK, "off (turn it on with [update] check = true"},
		{"newer", "[update]\ncheck = true\nurl = \"" + newer + "\"\nallowed_signers = \"" + filepath.ToSlash(newerSigners) + "\"\n",
			Warn, "hostlink 999.0.0 is available (this is " + version.Version + ")"},
		{"same", "[update]\ncheck = true\nurl = \"" + same + "\"\nallowed_signers = \"" + filepath.ToSlash(sameSigners) + "\"\n",
			OK, "up to date: the latest release is 1.0.0"},
		{"another key", "[update]\ncheck = true\nurl = \"" + newer + "\"\nallowed_signers = \"" + filepath.ToSlash(otherSigners) + "\"\n",
			Warn, "the last check failed: the signature on " + newer + "/SHA256SUMS does not verify"},
		{"release key", "[update]\ncheck = true\nurl = \"" + newer + "\"\n",
			Warn, "does not verify with the hostlink release key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hl := t.TempDir()
			t.Setenv("HOSTLINK_HOME", hl)
			t.Setenv("HOME", t.TempDir())
			private.MkdirAll(filepath.Join(hl, "config"))
			os.WriteFile(filepath.Join(hl, "config", "config.toml"), []byte(tt.cfg), 0o600)
			r := Run(context.Background(), Options{})
			for _, c := range r.Checks {
				if c.Name == "update check" {
					if c.Status != tt.st || !strings.Contains(c.Detail, tt.detail) || (c.Status == Warn && c.Fix == "") {
						t.Errorf("update check: %+v, want %s %q", c, tt.st, tt.detail)
					}
					return
				}
			}
			t.Errorf("no update check among %+v", r.Checks)
		})
	}
}

// TestCredentialStoreOnlyWherePairing: without a keychain or passphrase,
// a hostlink that pairs with nothing gets no warning about them; one with
// a platform link configured does (a failure: the link needs them).
func TestCredentialStoreOnlyWherePairing(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		store     Status
	}{
		{"no link", "", OK},
		{"link configured", "[link]\nurl = \"wss://platform.example/ws/local-executor\"\n", Fail},
		{"companion listener", "[companion]\nlisten = \"127.0.0.1:7718\"\n", Warn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hl := t.TempDir()
			t.Setenv("HOSTLINK_HOME", hl)
			t.Setenv("HOME", t.TempDir())
			private.MkdirAll(filepath.Join(hl, "config"))
			os.WriteFile(filepath.Join(hl, "config", "config.toml"), []byte(tc.cfg), 0o600)
			// The encrypted file without its passphrase: no store, on every OS.
			r := Run(context.Background(), Options{Getenv: func(k string) string {
				return map[string]string{"HOSTLINK_CREDENTIAL_BACKEND": "encrypted-file"}[k]
			}})
			for _, c := range r.Checks {
				if c.Name == "credential store" && c.Status != tc.store {
					t.Errorf("%+v, want %s", c, tc.store)
				}
				if c.Name == "credential store" && c.Status == OK && !strings.Contains(c.Detail, "not needed") {
					t.Errorf("%+v", c)
				}
			}
		})
	}
}

// TestConfigFixNamesWhatUsersHave: the fix for a bad key points to
// `hostlink defaults`, not to a file of the source tree.
func TestConfigFixNamesWhatUsersHave(t *testing.T) {
	hl := t.TempDir()
	t.Setenv("HOSTLINK_HOME", hl)
	private.MkdirAll(filepath.Join(hl, "config"))
	os.WriteFile(filepath.Join(hl, "config", "config.toml"), []byte("[server]\nlisen = \"x\"\n"), 0o600)
	r := Run(context.Background(), Options{})
	for _, c := range r.Checks {
		if c.Name == "config" {
			if c.Status != Fail || !strings.Contains(c.Fix, "hostlink defaults") || strings.Contains(c.Fix, "internal/") || !strings.Contains(c.Detail, `did you mean "server.listen"`) {
				t.Fatalf("%+v", c)
			}
			return
		}
	}
	t.Fatal("no config check")
}
