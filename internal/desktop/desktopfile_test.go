package desktop

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

func TestSplitExec(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		bad  bool
	}{
		{"xterm -T title", []string{"xterm", "-T", "title"}, false},
		{`"/opt/my app/run" --flag %U`, []string{"/opt/my app/run", "--flag", "%U"}, false},
		{`sh -c "echo \"hi\" \$HOME"`, []string{"sh", "-c", `echo "hi" $HOME`}, false},
		{`prog ""`, []string{"prog", ""}, false},
		{"  spaced\t out  ", []string{"spaced", "out"}, false},
		{`broken "quote`, nil, true},
	}
	for _, tc := range tests {
		got, err := splitExec(tc.in)
		if (err != nil) != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("splitExec(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestEntryArgv(t *testing.T) {
	e := desktopEntry{Name: "Viewer", Path: "/a/v.desktop"}
	tests := []struct {
		exec []string
		args []string
		want []string // nil: refused
	}{
		{[]string{"v", "%f"}, nil, []string{"v"}},
		{[]string{"v", "%f"}, []string{"a.txt"}, []string{"v", "a.txt"}},
		{[]string{"v", "%f"}, []string{"a", "b"}, nil},
		{[]string{"v", "%U"}, []string{"a", "b"}, []string{"v", "a", "b"}},
		{[]string{"v", "--name=%c", "%k", "%i", "100%%"}, nil, []string{"v", "--name=Viewer", "/a/v.desktop", "100%"}},
		{[]string{"v"}, []string{"extra"}, nil},
	}
	for _, tc := range tests {
		e.Exec = tc.exec
		got, ok := e.argv(tc.args)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("argv(%q, %q) = %q, %v; want %q", tc.exec, tc.args, got, ok, tc.want)
		}
	}
}

func TestInstalledApps(t *testing.T) {
	home, sys := t.TempDir(), t.TempDir()
	write := func(dir, rel, body string) {
		p := filepath.Join(dir, "applications", rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(home, "editor.desktop", "[Desktop Entry]\nType=Application\nName=Mine\nExec=myeditor %F\n")
	write(sys, "editor.desktop", "[Desktop Entry]\nType=Application\nName=System\nExec=editor\n")
	write(sys, "kde/term.desktop", "# c\n[Desktop Entry]\nType=Application\nName=Term\nExec=term\nTerminal=true\nStartupWMClass=Term\n[Desktop Action new]\nExec=other\n")
	write(sys, "hidden.desktop", "[Desktop Entry]\nType=Application\nName=H\nExec=h\nHidden=true\n")
	write(sys, "link.desktop", "[Desktop Entry]\nType=Link\nName=L\nURL=http://x\n")
	write(sys, "noexec.desktop", "[Desktop Entry]\nType=Application\nName=N\n")
	getenv := func(k string) string {
		return map[string]string{"XDG_DATA_HOME": home, "XDG_DATA_DIRS": sys + string(os.PathListSeparator) + "relative"}[k]
	}
	got := map[string]desktopEntry{}
	for _, e := range installedApps(getenv, 100) {
		got[e.ID] = e
	}
	if len(got) != 2 || got["editor"].Name != "Mine" || !slices.Equal(got["editor"].Exec, []string{"myeditor", "%F"}) {
		t.Errorf("installed: %+v", got)
	}
	if term := got["kde-term"]; !term.Terminal || term.WMClass != "Term" || term.Exec[0] != "term" {
		t.Errorf("kde/term.desktop: %+v", term)
	}
	if n := len(installedApps(getenv, 1)); n != 1 {
		t.Errorf("limit 1 listed %d", n)
	}
}

func TestDataDirs(t *testing.T) {
	home := t.TempDir()
	got := dataDirs(func(k string) string { return map[string]string{"HOME": home}[k] })
	want := []string{filepath.Join(home, ".local", "share"), "/usr/local/share", "/usr/share"}
	if runtime.GOOS == "windows" {
		want = want[:1] // the Unix defaults are not absolute paths there
	}
	if !slices.Equal(got, want) {
		t.Errorf("dataDirs = %q, want %q", got, want)
	}
}
