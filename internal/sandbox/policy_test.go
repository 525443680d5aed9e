package sandbox

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestDefaultHidden(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		h := DefaultHidden(goos)
		for _, must := range []string{".ssh", ".gnupg", ".aws", ".config/gcloud", ".docker/config.json", ".kube", ".netrc"} {
			if !slices.Contains(h, must) {
				t.Errorf("%s: %q not hidden by default", goos, must)
			}
		}
	}
	home := filepath.FromSlash("/home/ada")
	got := ResolveHidden([]string{".ssh", filepath.FromSlash("/abs/x"), "a/../b"}, home)
	want := []string{filepath.Join(home, ".ssh"), filepath.FromSlash("/abs/x"), filepath.Join(home, "b")}
	if filepath.Separator == '/' && !slices.Equal(got, want) {
		t.Errorf("ResolveHidden = %q, want %q", got, want)
	}
	if got := ResolveHidden([]string{".ssh"}, ""); len(got) != 0 {
		t.Errorf("no home: %q", got)
	}
}

func TestStatusString(t *testing.T) {
	tests := []struct {
		st   Status
		want string
	}{
		{Effective(Off), `off ([commands] sandbox = "off")`},
		{Status{Mode: Workdir, Mechanism: MechNamespaces}, "workdir via namespaces+landlock"},
		{Status{Mode: Workdir, Mechanism: MechLandlock, Unenforced: []string{RuleHiddenListing, RuleUDP}}, "workdir via landlock; not enforced: hidden-listing, udp"},
		{Status{Mode: Off, Mechanism: MechNone}, "off"},
		{Status{Mode: Failed, Mechanism: MechNone, Reason: "no Landlock"}, "FAILED: commands are refused, never run unconfined (no Landlock)"},
	}
	for _, tt := range tests {
		if got := tt.st.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.st, got, tt.want)
		}
	}
}

// TestHolders: the directories between a writable root and hostlink's
// paths inside it, outermost first; none for paths outside every root,
// and a root only where another root holds it.
func TestHolders(t *testing.T) {
	j := func(p ...string) string { return filepath.Join(append([]string{string(filepath.Separator)}, p...)...) }
	got := holders(
		[]string{j("home", "u", ".local", "bin", "hostlink"), j("home", "u", ".config", "hostlink"), j("home", "u", ".local", "state", "hostlink"), j("opt", "hostlink", "bin", "hostlink")},
		[]string{j("home", "u"), j("home", "u", ".local"), j("srv")},
	)
	want := []string{j("home", "u", ".local"), j("home", "u", ".config"), j("home", "u", ".local", "bin"), j("home", "u", ".local", "state")}
	if !slices.Equal(got, want) {
		t.Errorf("holders = %v, want %v", got, want)
	}
}
