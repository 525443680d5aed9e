package config

import "testing"

func TestKeyIndexLine(t *testing.T) {
	doc := []byte(`# comment
top = 1

[limits]
max_read_bytes = 5
sub.deep = 2

[[workdirs]]
alias = "a"

[[workdirs]]
path = "/b"

[workdirs.nested]
x = 1

[server]
listen = { host = "h", port = [
  1,
  { n = 2 },
] }

inline = [{ alias = "c" }, { alias = "d",
  path = "/d" }]
`)
	ix := indexKeys(doc)
	tests := []struct {
		key  string
		line int
	}{
		{"top", 2},
		{"limits", 4},
		{"limits.max_read_bytes", 5},
		{"limits.sub.deep", 6},
		{"limits.missing", 4},
		{"workdirs[0]", 8},
		{"workdirs[0].alias", 9},
		{"workdirs[0].path", 8},
		{"workdirs[1]", 11},
		{"workdirs[1].path", 12},
		{"workdirs[1].alias", 11},
		{"workdirs[1].nested.x", 15},
		{"server.listen", 18},
		{"server.listen.host", 18},
		{"server.listen.port[0]", 19},
		{"server.listen.port[1].n", 20},
		{"server.inline[1]", 23},
		{"server.inline[1].path", 24},
		{"server.inline[2].path", 23},
		{"nothing", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := ix.line(tt.key); got != tt.line {
			t.Errorf("line(%q) = %d, want %d", tt.key, got, tt.line)
		}
	}
}

func TestKeyIndexStopsAtSyntaxError(t *testing.T) {
	ix := indexKeys([]byte("a = 1\nb = \nc = 3\n"))
	if got := ix.line("a"); got != 1 {
		t.Errorf("line(a) = %d, want 1", got)
	}
	if got := ix.line("c"); got != 0 {
		t.Errorf("line(c) = %d, want 0", got)
	}
}
