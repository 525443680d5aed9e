package glob

import "testing"

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, rel string
		fold, want   bool
	}{
		{"src/**", "src/a/b.go", false, true},
		{"src/**", "src", false, true},
		{"src/**", "srcx/a", false, false},
		// Below a directory, never the directory itself (a saved path
		// grant, see daemon.SaveGrant).
		{"src/**/*", "src", false, false},
		{"src/**/*", "src/a", false, true},
		{"src/**/*", "src/a/b.go", false, true},
		{"src/**/*", "srcx/a", false, false},
		{"src/{a,b}/**", "src/b/x.go", false, true},
		{"src/{a,b}/**", "src/c/x.go", false, false},
		{"*.md", "notes.md", false, true},
		{"*.md", "d/notes.md", false, false},
		{"**/*.md", "d/e/notes.md", false, true},
		{"[ab].txt", "a.txt", false, true},
		{`\*.txt`, "*.txt", false, true},
		{`\*.txt`, "a.txt", false, false},
		{"SRC/**", "src/x", false, false},
		{"SRC/**", "src/x", true, true},
		{"src/[", "src/[", false, false}, // malformed: matches nothing
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.rel, tt.fold); got != tt.want {
			t.Errorf("Match(%q, %q, %v) = %v, want %v", tt.pattern, tt.rel, tt.fold, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, p := range []string{"src/**", "**/*.go", "src/{a,b}/**", "[ab]*", `\*`} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "/abs/**", "src/[", "src/{a,b", `trailing\`} {
		if Check(p) == nil {
			t.Errorf("Check(%q) accepted a bad pattern", p)
		}
	}
}
