package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestHint(t *testing.T) {
	if filepath.Separator != '/' {
		t.Skip("Unix paths")
	}
	p := Policy{Mode: Workdir, Hidden: []string{"/home/u/.ssh"}, Protected: []string{"/home/u/.local/state/hostlink"}, Writable: []string{"/home/u/.cache/go-build"},
		Guarded: []string{"/work/.local/bin/hostlink"}}
	tests := []struct {
		name, stderr string
		want         []string // substrings; none: no hint
	}{
		{"hidden", "cat: /home/u/.ssh/id_ed25519: Permission denied\n", []string{"/home/u/.ssh/id_ed25519", "[commands] hidden"}},
		{"protected", "open /home/u/.local/state/hostlink/token: permission denied\n", []string{"hostlink's own"}},
		{"protected missing", "cat: '/home/u/.local/state/hostlink/token': No such file or directory\n", []string{"hostlink's own"}},
		{"guarded", "sh: 1: cannot create /work/.local/bin/hostlink: Read-only file system\n", []string{"hostlink's own program", "may read it"}},
		{"write outside", "touch: cannot touch '/etc/x': Permission denied\n", []string{"/etc/x", "writable"}},
		{"python", "PermissionError: [Errno 13] Permission denied: '/opt/out.txt'\n", []string{"/opt/out.txt"}},
		{"private tmp", "ls: cannot access '/tmp/theirs': No such file or directory\n", []string{"private /tmp"}},
		{"network", "curl: (6) Could not resolve host: example.com\n", []string{`network = "on"`}},
		{"go dial", "dial tcp 127.0.0.1:80: connect: permission denied\n", []string{"network"}},
		{"inside the workdir", "touch: cannot touch '/work/x': Permission denied\n", nil},
		{"writable", "mkdir /home/u/.cache/go-build/00: permission denied\n", nil},
		{"unrelated", "error: expected ';' before '}' token\n", nil},
		{"relative", "sh: f: Permission denied\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Hint(p, "/work", tt.stderr)
			if len(tt.want) == 0 && h != "" {
				t.Fatalf("hint %q, want none", h)
			}
			for _, w := range tt.want {
				if !strings.Contains(h, w) {
					t.Errorf("hint %q lacks %q", h, w)
				}
			}
		})
	}
	if h := Hint(Policy{Mode: Off}, "/work", "cat: /home/u/.ssh/x: Permission denied"); h != "" {
		t.Errorf("off: hint %q", h)
	}
	pn := p
	pn.Network = true
	if h := Hint(pn, "/work", "curl: (6) Could not resolve host: example.com"); h != "" {
		t.Errorf("network on: hint %q", h)
	}
	many := strings.Repeat("touch: cannot touch '/a/b': Permission denied\ncat: /home/u/.ssh/k: Permission denied\ncurl: Could not resolve host\ncp: cannot create '/c': Permission denied\n", 3)
	if n := strings.Count(Hint(p, "/work", many), "; ") + 1; n != maxHints {
		t.Errorf("%d hints, want at most %d", n, maxHints)
	}
}
