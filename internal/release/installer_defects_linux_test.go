package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/hostlink/hostlink/internal/tstest"
)

// signerFingerprint is the SHA256 fingerprint of the throw-away key the
// snapshot is signed with, as ssh-keygen prints it.
func signerFingerprint(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(tstest.Env(t, "HOSTLINK_RELEASE_SIGNERS", "the allowed-signers file of the key .ci/release-check signs with"))
	if err != nil {
		t.Fatal(err)
	}
	// principal namespaces="..." keytype base64
	f := strings.Fields(string(b))
	if len(f) < 4 {
		t.Fatalf("allowed_signers %q", b)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(f[2] + " " + f[3]))
	if err != nil {
		t.Fatal(err)
	}
	return ssh.FingerprintSHA256(pub)
}

// minimalPath makes a directory holding only the tools install.sh uses,
// as a minimal container has them: no ssh-keygen, unless extra adds one.
func minimalPath(t *testing.T, in *installer, extra map[string]string) {
	t.Helper()
	bin := filepath.Join(in.dir, "minbin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"sh", "uname", "curl", "sha256sum", "cut", "mktemp", "rm", "mv", "cp", "chmod", "mkdir",
		"rmdir", "cmp", "awk", "sed", "tar", "gzip", "cat", "dirname", "sort", "grep", "head"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for name, script := range extra {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in.setEnv("PATH", bin)
}

// forgeRelease copies the snapshot and replaces this machine's archive by
// another with a fake hostlink, listing its digest in SHA256SUMS as an
// attacker who controls the download would: only the signature tells.
func forgeRelease(t *testing.T, d *dist) (dir, archive string) {
	t.Helper()
	dir = copyDist(t, d)
	archive = "hostlink_" + d.meta.Version + "_linux_" + runtime.GOARCH + ".tar.gz"
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	body := []byte("#!/bin/sh\necho forged\n")
	tw.WriteHeader(&tar.Header{Name: "hostlink", Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
	tw.Write(body)
	tw.Close()
	gz.Close()
	if err := os.WriteFile(filepath.Join(dir, archive), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	sums, _ := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		if strings.HasSuffix(l, "  "+archive) {
			l = hex.EncodeToString(sum[:]) + "  " + archive
		}
		out = append(out, l)
	}
	os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(out, "\n")+"\n"), 0o644)
	return dir, archive
}

// TestInstallScriptRefusesWithoutSSHKeygen serves a forged release (the
// archive and SHA256SUMS both replaced) to install.sh on a PATH without
// ssh-keygen: it refuses, saying how to get ssh-keygen, and installs
// nothing; only the loudly named flag installs, with a warning. An OpenSSH
// too old for -Y is named as such, not as a bad signature.
func TestInstallScriptRefusesWithoutSSHKeygen(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	forged, _ := forgeRelease(t, d)

	t.Run("no ssh-keygen", func(t *testing.T) {
		in := newInstaller(t, forged)
		minimalPath(t, in, nil)
		prefix := filepath.Join(in.dir, "prefix")
		out, err := in.run(prefix)
		if err == nil {
			t.Fatalf("install.sh without ssh-keygen succeeded:\n%s", out)
		}
		contains(t, "install.sh output", out, "ssh-keygen is not installed", "not installing", "apt install openssh-client", "--insecure-skip-signature")
		if _, err := os.Lstat(prefix); err == nil {
			t.Errorf("install.sh created %s though it refused", prefix)
		}

		out, err = in.run(prefix, "--insecure-skip-signature")
		if err != nil {
			t.Fatalf("install.sh --insecure-skip-signature: %v\n%s", err, out)
		}
		contains(t, "install.sh --insecure-skip-signature output", out, "WARNING: --insecure-skip-signature: the signature on SHA256SUMS is NOT verified")
		if strings.Contains(out, "Signature on SHA256SUMS: good") {
			t.Errorf("install.sh claimed a good signature it did not check:\n%s", out)
		}
	})

	t.Run("OpenSSH without -Y", func(t *testing.T) {
		in := newInstaller(t, forged)
		// What OpenSSH 7.4's ssh-keygen says to -Y (its own getopt).
		minimalPath(t, in, map[string]string{
			"ssh-keygen": "#!/bin/sh\necho 'ssh-keygen: unknown option -- Y' >&2\necho 'usage: ssh-keygen [-q] [-b bits]' >&2\nexit 1\n",
			"ssh":        "#!/bin/sh\necho 'OpenSSH_7.4p1, OpenSSL 1.0.2k-fips  26 Jan 2017' >&2\n",
		})
		prefix := filepath.Join(in.dir, "prefix")
		out, err := in.run(prefix)
		if err == nil {
			t.Fatalf("install.sh with an old ssh-keygen succeeded:\n%s", out)
		}
		contains(t, "install.sh output", out, "(OpenSSH_7.4p1, OpenSSL 1.0.2k-fips  26 Jan 2017) is too old to verify signatures", "OpenSSH 8.1", "Not installing")
		if strings.Contains(out, "does not verify") {
			t.Errorf("an old ssh-keygen was reported as a bad signature:\n%s", out)
		}
		if _, err := os.Lstat(prefix); err == nil {
			t.Errorf("install.sh created %s though it refused", prefix)
		}
	})

	t.Run("release key", func(t *testing.T) {
		// Without --allowed-signers the key built into install.sh is the
		// one used, and it did not sign the snapshot.
		in := newInstaller(t, d.dir)
		for i, kv := range in.env {
			if strings.HasPrefix(kv, "HOSTLINK_ALLOWED_SIGNERS=") {
				in.env = append(in.env[:i], in.env[i+1:]...)
				break
			}
		}
		prefix := filepath.Join(in.dir, "prefix")
		out, err := in.run(prefix)
		if err == nil || !strings.Contains(out, "the signature on SHA256SUMS does not verify with the hostlink release key: not installing") {
			t.Errorf("install.sh with the release key against the snapshot: %v\n%s", err, out)
		}
	})
}

// TestInstallScriptHelp runs --help the way users do, piped into sh: it
// prints the usage, not the script's code.
func TestInstallScriptHelp(t *testing.T) {
	script, err := os.ReadFile(repoFile("install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-s", "--", "--help"}, {"-s", "--", "-h"}, {repoFile("install.sh"), "--help"}} {
		cmd := exec.Command("/bin/sh", args...)
		cmd.Stdin = bytes.NewReader(script)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("sh %v: %v\n%s", args, err, out)
		}
		contains(t, "sh "+strings.Join(args, " "), string(out), "Install hostlink on Linux or macOS", "--version X.Y.Z", "--insecure-skip-signature", "--allowed-signers FILE")
		for _, code := range []string{"set -eu", "RELEASE_SIGNER", "#!/bin/sh"} {
			if strings.Contains(string(out), code) {
				t.Errorf("sh %v printed the script's code (%q):\n%s", args, code, out)
			}
		}
	}
}

// TestInstallScriptVersionWithBaseURL checks that --version holds with
// --base-url: the release there must be that version.
func TestInstallScriptVersionWithBaseURL(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	in := newInstaller(t, d.dir)
	prefix := filepath.Join(in.dir, "prefix")
	out, err := in.run(prefix, "--version", "9.9.9")
	if err == nil || !strings.Contains(out, "has no hostlink 9.9.9 for linux/"+runtime.GOARCH) {
		t.Errorf("install.sh --version 9.9.9 against the %s snapshot: %v\n%s", d.meta.Version, err, out)
	}
	if _, err := os.Lstat(prefix); err == nil {
		t.Errorf("install.sh created %s though it refused", prefix)
	}
	out, err = in.run(prefix, "--version", "v"+d.meta.Version)
	if err != nil {
		t.Fatalf("install.sh --version v%s: %v\n%s", d.meta.Version, err, out)
	}
	contains(t, "install.sh output", out, "Installed hostlink "+d.meta.Version)
}

// listTree lists the files and directories under dir, with each file's
// content, for comparing before and after.
func listTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if e.IsDir() {
			tree[rel+"/"] = ""
		} else {
			b, _ := os.ReadFile(p)
			tree[rel] = string(b)
		}
		return nil
	})
	return tree
}

// TestInstallScriptAllOrNothing makes a destination unwritable after the
// binary's (a file where the fish completions' directory goes): install.sh
// fails and leaves the prefix as it was, both for a first install and over
// an earlier hostlink, with no staged file behind.
func TestInstallScriptAllOrNothing(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	for _, earlier := range []bool{false, true} {
		in := newInstaller(t, d.dir)
		prefix := filepath.Join(in.dir, "prefix")
		os.MkdirAll(filepath.Join(prefix, "share"), 0o755)
		os.WriteFile(filepath.Join(prefix, "share", "fish"), []byte("not a directory\n"), 0o644)
		if earlier {
			os.MkdirAll(filepath.Join(prefix, "bin"), 0o755)
			os.WriteFile(filepath.Join(prefix, "bin", "hostlink"), []byte("#!/bin/sh\necho earlier\n"), 0o755)
			os.MkdirAll(filepath.Join(prefix, "share", "bash-completion", "completions"), 0o755)
			os.WriteFile(filepath.Join(prefix, "share", "bash-completion", "completions", "hostlink"), []byte("# earlier\n"), 0o644)
		}
		if in.asUser {
			exec.Command("chown", "-R", "65534:65534", prefix).Run()
		}
		before := listTree(t, prefix)
		out, err := in.run(prefix)
		if err == nil || !strings.Contains(out, "nothing was installed") {
			t.Errorf("earlier=%v: install.sh with an unwritable completions directory: %v\n%s", earlier, err, out)
		}
		after := listTree(t, prefix)
		for k, v := range after {
			if before[k] != v {
				t.Errorf("earlier=%v: after the failed install %s is %q, was %q", earlier, k, v, before[k])
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				t.Errorf("earlier=%v: the failed install removed %s", earlier, k)
			}
		}
	}
}

// TestInstallScriptSignals stops install.sh with SIGHUP while it downloads
// (as a closed terminal does) and with SIGPIPE (its output's reader gone):
// its temporary directory goes with it.
func TestInstallScriptSignals(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	archive := "hostlink_" + d.meta.Version + "_linux_" + runtime.GOARCH + ".tar.gz"

	t.Run("SIGHUP", func(t *testing.T) {
		// Under nohup the test starts with SIGHUP ignored, an ignored
		// signal stays ignored across exec, and a shell cannot trap a
		// signal ignored on entry (POSIX): the script would never see the
		// hangup a terminal sends. A handler of the test's own makes the
		// script start with the default disposition, as from a terminal.
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		in := newInstaller(t, d.dir)
		// The archive's download waits until the signal is sent.
		asked, release := make(chan struct{}, 1), make(chan struct{})
		files := http.FileServer(http.Dir(d.dir))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/"+archive) {
				select {
				case asked <- struct{}{}:
				default:
				}
				<-release
				return
			}
			files.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		in.url = srv.URL
		tmp := in.tmpdir(t)
		cmd := in.command(filepath.Join(in.dir, "prefix"))
		cmd.SysProcAttr.Setpgid = true
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		<-asked
		if n := entries(t, tmp); n != 1 {
			t.Fatalf("%d entries in TMPDIR while downloading, want install.sh's one", n)
		}
		// The terminal's hangup goes to the whole foreground group.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGHUP)
		err := cmd.Wait()
		if err == nil {
			t.Errorf("install.sh went on after SIGHUP:\n%s", out.String())
		}
		if n := entries(t, tmp); n != 0 {
			t.Errorf("%d entries left in TMPDIR after SIGHUP:\n%s", n, out.String())
		}
	})

	t.Run("SIGPIPE", func(t *testing.T) {
		in := newInstaller(t, d.dir)
		tmp := in.tmpdir(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // nobody reads: the first line install.sh prints raises SIGPIPE
		cmd := in.command(filepath.Join(in.dir, "prefix"))
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &stderr
		err = cmd.Run()
		w.Close()
		if err == nil {
			t.Errorf("install.sh went on with its output gone:\n%s", stderr.String())
		}
		if n := entries(t, tmp); n != 0 {
			t.Errorf("%d entries left in TMPDIR after SIGPIPE (%v):\n%s", n, err, stderr.String())
		}
	})
}

// tmpdir gives the installing user a TMPDIR of its own, to see what
// install.sh leaves there.
func (in *installer) tmpdir(t *testing.T) string {
	t.Helper()
	tmp := filepath.Join(in.dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if in.asUser {
		os.Chown(tmp, nobody, nobody)
	}
	in.setEnv("TMPDIR", tmp)
	return tmp
}

func entries(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}
