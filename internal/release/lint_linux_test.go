package release

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// allowList reads packaging/lint/NAME: one tag a line, then "#" and why
// the tag is right for hostlink. A tag without a reason is an error.
func allowList(t *testing.T, name string) map[string]bool {
	t.Helper()
	f, err := os.Open(repoFile("packaging/lint/" + name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	allowed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tag, why, _ := strings.Cut(line, "#")
		if strings.TrimSpace(why) == "" {
			t.Errorf("packaging/lint/%s: %q says no reason", name, line)
		}
		allowed[strings.TrimSpace(tag)] = true
	}
	return allowed
}

// checkTags fails for every tag the linter emitted that the allow-list
// does not name, and for every allowed tag that no package emitted any
// more (the list must not hide what has been fixed).
func checkTags(t *testing.T, linter string, emitted map[string][]string, allowed map[string]bool, output string) {
	t.Helper()
	for tag, lines := range emitted {
		if !allowed[tag] {
			t.Errorf("%s: %s is not in packaging/lint's allow-list:\n%s", linter, tag, strings.Join(lines, "\n"))
		}
	}
	for tag := range allowed {
		if _, ok := emitted[tag]; !ok {
			t.Errorf("%s no longer emits %s: remove it from packaging/lint's allow-list", linter, tag)
		}
	}
	if t.Failed() {
		t.Logf("%s said:\n%s", linter, output)
	}
}

// TestLintian runs lintian on both .debs, with informational tags: every
// tag must be in packaging/lint/lintian.allow, with its reason.
func TestLintian(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	lintian := tstest.Tool(t, "lintian")
	allowed := allowList(t, "lintian.allow")
	emitted := map[string][]string{}
	var all strings.Builder
	// "E: hostlink: tag-name detail", also "W: hostlink: tag [path]".
	re := regexp.MustCompile(`^([EWI]): hostlink(?: [a-z]+)?: ([a-z0-9][a-z0-9+.-]*)`)
	// Both packages in one run: lintian's start-up is most of its time.
	out, err := exec.Command(lintian, "--display-info", "--tag-display-limit", "0", "--allow-root",
		d.pkg(t, "deb", "amd64"), d.pkg(t, "deb", "arm64")).CombinedOutput()
	all.Write(out)
	if err != nil && len(out) == 0 {
		t.Fatalf("lintian: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			emitted[m[2]] = append(emitted[m[2]], l)
		} else if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "N:") {
			t.Errorf("lintian said something this test does not read: %q", l)
		}
	}
	checkTags(t, "lintian", emitted, allowed, all.String())
}

// TestRpmlint runs rpmlint on both .rpms: every warning and error must be
// in packaging/lint/rpmlint.allow, with its reason.
func TestRpmlint(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	rpmlint := tstest.Tool(t, "rpmlint")
	allowed := allowList(t, "rpmlint.allow")
	emitted := map[string][]string{}
	var all strings.Builder
	// "hostlink.x86_64: W: tag-name detail"
	re := regexp.MustCompile(`^hostlink\.[a-z0-9_]+: ([EW]): ([A-Za-z0-9][A-Za-z0-9_.-]*)`)
	// rpmlint unpacks with `rpm2cpio | cpio -id` in a temporary directory,
	// and nFPM's payload names files by absolute path, which GNU cpio
	// writes where they say: onto this machine's /usr. A cpio first on
	// PATH that keeps them below the directory stops that.
	bin := t.TempDir()
	realCpio := tstest.Tool(t, "cpio")
	os.WriteFile(filepath.Join(bin, "cpio"), []byte("#!/bin/sh\nexec "+realCpio+" --no-absolute-filenames \"$@\"\n"), 0o755)
	for _, arch := range []string{"amd64", "arm64"} {
		p := d.pkg(t, "rpm", arch)
		cmd := exec.Command(rpmlint, "--config", repoFile("packaging/lint/rpmlint.toml"), p)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, _ := cmd.CombinedOutput()
		all.Write(out)
		for _, l := range strings.Split(string(out), "\n") {
			if m := re.FindStringSubmatch(l); m != nil {
				emitted[m[2]] = append(emitted[m[2]], l)
			}
		}
		if !slices.ContainsFunc(strings.Split(string(out), "\n"), func(l string) bool { return strings.Contains(l, "packages and 0 specfiles checked") }) {
			t.Errorf("rpmlint %s did not check it:\n%s", filepath.Base(p), out)
		}
	}
	checkTags(t, "rpmlint", emitted, allowed, all.String())
}
