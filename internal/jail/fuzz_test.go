package jail

import (
	"strings"
	"testing"
)

// FuzzResolve checks Resolve's invariants for arbitrary input under both
// flavors: a resolved path is relative, clean, free of "..", NUL and
// separators of the other kind, and resolving it again gives itself.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "/w/x", `C:\w\x`, `\\?\C:\w\..\x`, "a\x00b", "CON.txt", "a/./b/../c",
		`\\srv\share\x`, "x:y", "…/..", "a//b/", "/w/../w/x", strings.Repeat("a/", 300)} {
		f.Add(s)
	}
	roots := []*Root{rootAt("/w", Unix, false), rootAt("/w", Unix, true), rootAt(`C:\w`, Windows, true)}
	f.Fuzz(func(t *testing.T, in string) {
		for _, r := range roots {
			p, err := r.Resolve(in)
			if err != nil {
				continue
			}
			s := p.String()
			if s == "" || strings.HasPrefix(s, "/") || strings.Contains(s, "\x00") {
				t.Fatalf("Resolve(%q) = %q", in, s)
			}
			for _, c := range strings.Split(s, "/") {
				if c == ".." || c == "" || (c == "." && s != ".") {
					t.Fatalf("Resolve(%q) = %q has component %q", in, s, c)
				}
				if r.flavor == Windows && (strings.ContainsAny(c, `\:`) || isReservedWindowsName(c)) {
					t.Fatalf("Resolve(%q) = %q has Windows-invalid component %q", in, s, c)
				}
			}
			again, err := r.Resolve(s)
			if err != nil || again != p {
				t.Fatalf("Resolve(Resolve(%q)) = %q, %v; want %q", in, again, err, s)
			}
		}
	})
}
