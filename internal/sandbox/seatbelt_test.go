//go:build unix

// Seatbelt profiles hold macOS paths, which the plan's path arithmetic
// (filepath) reads as macOS does on every Unix, and differently on
// Windows, where no profile is ever made.

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

// TestSeatbeltOwnFiles: hostlink's program files are never written, nor
// is a directory inside the workdir that holds one of hostlink's paths
// moved or removed (the rule is on the directory, not below it).
func TestSeatbeltOwnFiles(t *testing.T) {
	pl := plan{
		workdir:   "/Users/ada",
		protected: []string{"/Users/ada/Library/Application Support/hostlink"},
		guarded:   []string{"/Users/ada/.local/bin/hostlink", "/Users/ada/Library/LaunchAgents/dev.hostlink.serve.plist"},
	}
	p := seatbeltProfile(pl, "/private/var/folders/x/T/hostlink-sandbox-501/cmd-1")
	deny := strings.Index(p, "(deny file-write*\n")
	if deny < strings.Index(p, "(allow file-write*") {
		t.Fatalf("no denial of writes after the allowed ones:\n%s", p)
	}
	for _, want := range []string{
		`(subpath "/Users/ada/.local/bin/hostlink")`,
		`(subpath "/Users/ada/Library/LaunchAgents/dev.hostlink.serve.plist")`,
		`(literal "/Users/ada/.local")`,
		`(literal "/Users/ada/.local/bin")`,
		`(literal "/Users/ada/Library")`,
		`(literal "/Users/ada/Library/LaunchAgents")`,
		`(literal "/Users/ada/Library/Application Support")`,
	} {
		if i := strings.Index(p, want); i < deny {
			t.Errorf("profile lacks %q in its denial of writes:\n%s", want, p)
		}
	}
	if strings.Contains(p, `(literal "/Users/ada")`) {
		t.Errorf("the workdir itself is denied:\n%s", p)
	}
}
