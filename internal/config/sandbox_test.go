package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSandboxKeys(t *testing.T) {
	home := t.TempDir()
	paths := func(n int) string {
		var ps []string
		for i := range n {
			ps = append(ps, fmt.Sprintf("%q", filepath.Join(home, "p", fmt.Sprint(i))))
		}
		return "[" + strings.Join(ps, ", ") + "]"
	}
	tests := []struct {
		name, doc string
		want      string // in the error; "" means valid
	}{
		{"defaults", "", ""},
		{"off", "sandbox = \"off\"\nnetwork = \"on\"\n", ""},
		{"bad mode", "sandbox = \"strict\"\n", `commands.sandbox: "strict" is not one of`},
		{"bad network", "network = \"yes\"\n", `commands.network: "yes" is not one of`},
		{"relative writable", "writable = [\"cache\"]\n", `commands.writable[0]: "cache" is not an absolute path`},
		{"relative hidden", "hidden = [\"/ok\", \".ssh\"]\n", `commands.hidden[1]: ".ssh" is not an absolute path`},
		{"at the limit", "hidden = " + paths(maxSandboxPaths) + "\n", ""},
		{"past the limit", "writable = " + paths(maxSandboxPaths+1) + "\n", "commands.writable: 257 paths is too many: at most 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte("[commands]\n"+tt.doc), "c.toml", home)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
	c, err := parse([]byte("[commands]\nwritable = [\"~/.cache/go-build\"]\nhidden = []\n"), "c.toml", home)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Commands.Writable, []string{filepath.Join(home, ".cache", "go-build")}) {
		t.Errorf("writable %q: ~ not expanded", c.Commands.Writable)
	}
	if c.Commands.Hidden == nil || len(c.Commands.Hidden) != 0 {
		t.Errorf("hidden = [] must hide nothing, not mean the default list: %#v", c.Commands.Hidden)
	}
	if d := Default(); d.Commands.Sandbox != "workdir" || d.Commands.Network != "off" || d.Commands.Hidden != nil {
		t.Errorf("defaults %+v", d.Commands)
	}
	if Default().Policy.CommandsUnsandboxed != "ask" {
		t.Errorf("commands_unsandboxed defaults to %q, want ask", Default().Policy.CommandsUnsandboxed)
	}
}
