package pathtree

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// j builds an absolute path with the OS's separator.
func j(p ...string) string {
	return filepath.Join(append([]string{string(os.PathSeparator)}, p...)...)
}

func TestWithin(t *testing.T) {
	tests := []struct {
		p, root string
		want    bool
	}{
		{j("a"), j("a"), true},
		{j("a", "b"), j("a"), true},
		{j("a", "b", "c"), j("a"), true},
		{j("ab"), j("a"), false}, // a prefix of the name is not a parent
		{j("a"), j("a", "b"), false},
		{j("a"), j(), true}, // everything is within the root
		{j(), j(), true},
		{j("b"), j("a"), false},
	}
	for _, tt := range tests {
		if got := Within(tt.p, tt.root); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.p, tt.root, got, tt.want)
		}
	}
	if got := WithinAny(j("c", "d"), []string{j("a"), j("c"), j("c", "d")}); got != j("c") {
		t.Errorf("WithinAny = %q, want the first root that holds it", got)
	}
	if got := WithinAny(j("e"), []string{j("a"), j("c")}); got != "" {
		t.Errorf("WithinAny = %q, want none", got)
	}
}

func TestOutermost(t *testing.T) {
	got := Outermost([]string{j("a", "b"), j("a"), j("c"), j("ab"), j("a", "b", "c"), j("c")})
	if want := []string{j("a"), j("ab"), j("c")}; !slices.Equal(got, want) {
		t.Errorf("Outermost = %q, want %q", got, want)
	}
}
