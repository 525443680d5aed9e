package completion

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestInstalledMatchesPackaging: every place install.sh, the packages and
// the Homebrew formula put a completion script is in Installed, so that
// hostlink guards what was installed.
func TestInstalledMatchesPackaging(t *testing.T) {
	var want []string
	sh, err := os.ReadFile("../../install.sh")
	if err != nil {
		t.Fatal(err)
	}
	// install.sh stages each "completions/FILE:PLACE" below $share.
	for _, m := range regexp.MustCompile(`"completions/hostlink\.\w+:([^"]+)"`).FindAllStringSubmatch(string(sh), -1) {
		want = append(want, "share/"+m[1])
	}
	gr, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`dst: /usr/(share/[^\s]*(?:completion|zsh|fish)[^\s]*)`).FindAllStringSubmatch(string(gr), -1) {
		want = append(want, m[1])
	}
	// Homebrew's installers put bash, zsh and fish scripts here.
	homebrew := map[string]string{"bash_completion": "etc/bash_completion.d/", "zsh_completion": "share/zsh/site-functions/", "fish_completion": "share/fish/vendor_completions.d/"}
	for _, m := range regexp.MustCompile(`(\w+_completion)\.install "completions/([^"]+)"(?: => "([^"]+)")?`).FindAllStringSubmatch(string(gr), -1) {
		name := m[3]
		if name == "" {
			name = m[2]
		}
		want = append(want, homebrew[m[1]]+name)
	}
	if len(want) < 9 {
		t.Fatalf("found only %v in install.sh and .goreleaser.yaml", want)
	}
	for _, w := range want {
		if !slices.Contains(Installed, w) {
			t.Errorf("%s is installed but not in Installed", w)
		}
	}
	for _, i := range Installed {
		if !slices.Contains(want, i) || strings.HasPrefix(i, "/") {
			t.Errorf("Installed has %s, which nothing installs", i)
		}
	}
}
