package sandbox

import (
	"strings"
	"testing"
)

func TestSeatbeltProfile(t *testing.T) {
	pl := plan{
		workdir:   "/Users/ada/work",
		writable:  []string{"/Users/ada/Library/Caches/go-build"},
		hidden:    []string{"/Users/ada/.ssh", `/Users/ada/we"ird\path`},
		protected: []string{"/Users/ada/Library/Application Support/hostlink"},
	}
	tmp := "/Users/ada/Library/Application Support/hostlink/sandbox/cmd-1"
	p := seatbeltProfile(pl, tmp)
	for _, want := range []string{
		"(version 1)\n(allow default)\n",
		"(deny file-write*)\n(allow file-write*\n",
		`(subpath "/Users/ada/work")`,
		`(subpath "/Users/ada/Library/Caches/go-build")`,
		`(literal "/dev/null")`,
		"(deny file-read* file-write*\n",
		`(subpath "/Users/ada/.ssh")`,
		`(subpath "/Users/ada/we\"ird\\path")`,
		`(subpath "/Users/ada/Library/Application Support/hostlink")`,
		"(deny network-outbound (remote ip))",
		"(allow signal (target same-sandbox))",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("profile lacks %q:\n%s", want, p)
		}
	}
	// The denials come after what they override, and the command's own
	// temporary directory, inside hostlink's protected state directory,
	// is allowed after them: SBPL's last match wins.
	if strings.Index(p, "(deny file-read* file-write*") < strings.Index(p, "(allow file-write*") {
		t.Errorf("hidden paths are denied before the writable ones are allowed:\n%s", p)
	}
	ownTmp := `(allow file-read* file-write* (subpath "` + tmp + `"))`
	if i := strings.Index(p, ownTmp); i < strings.Index(p, "(deny file-read* file-write*") {
		t.Errorf("the command's temporary directory is not allowed after the denials:\n%s", p)
	}
	if strings.Count(p, "(") != strings.Count(p, ")") {
		t.Errorf("unbalanced parentheses:\n%s", p)
	}
	pl.network = true
	if p := seatbeltProfile(pl, "/tmp/x"); strings.Contains(p, "network") {
		t.Errorf("network allowed, yet the profile denies some:\n%s", p)
	}
}
