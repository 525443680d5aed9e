package desktop

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// An installed application as a freedesktop.org desktop entry describes it
// (Desktop Entry Specification 1.5): the only applications
// computer_launch_app starts on Linux.
type desktopEntry struct {
	ID        string // desktop file id: "org.gnome.Calculator", "xterm"
	Path      string // the .desktop file
	Name      string
	Exec      []string // the Exec key split into arguments, field codes kept
	TryExec   string
	WMClass   string // StartupWMClass
	Terminal  bool
	NoDisplay bool
}

// maxEntryBytes bounds one .desktop file read.
const maxEntryBytes = 64 << 10

// dataDirs are the XDG data directories, most important first.
func dataDirs(getenv func(string) string) []string {
	home := getenv("XDG_DATA_HOME")
	if home == "" && getenv("HOME") != "" {
		home = filepath.Join(getenv("HOME"), ".local", "share")
	}
	dirs := []string{home}
	sys := getenv("XDG_DATA_DIRS")
	if sys == "" {
		sys = "/usr/local/share:/usr/share"
	}
	dirs = append(dirs, filepath.SplitList(sys)...)
	var out []string
	for _, d := range dirs {
		if filepath.IsAbs(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// installedApps lists the launchable applications of the XDG data
// directories: Type=Application, not Hidden, with an Exec line. An id in
// a more important directory hides the same id further down.
func installedApps(getenv func(string) string, limit int) []desktopEntry {
	seen := map[string]bool{}
	var out []desktopEntry
	for _, dir := range dataDirs(getenv) {
		root := filepath.Join(dir, "applications")
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || len(out) >= limit {
				return fs.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".desktop") || !d.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			id := strings.TrimSuffix(strings.ReplaceAll(filepath.ToSlash(rel), "/", "-"), ".desktop")
			if seen[id] {
				return nil
			}
			seen[id] = true
			if e, ok := readEntry(p, id); ok {
				out = append(out, e)
			}
			return nil
		})
	}
	return out
}

// readEntry parses the [Desktop Entry] group of one file; ok is false for
// anything that is not a launchable application.
func readEntry(path, id string) (desktopEntry, bool) {
	f, err := os.Open(path)
	if err != nil {
		return desktopEntry{}, false
	}
	defer f.Close()
	e := desktopEntry{ID: id, Path: path}
	kv := map[string]string{}
	group := ""
	sc := bufio.NewScanner(&limitedReader{f, maxEntryBytes})
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			group = line
		case group == "[Desktop Entry]":
			k, v, ok := strings.Cut(line, "=")
			if ok {
				kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	if kv["Type"] != "Application" || kv["Hidden"] == "true" || kv["Exec"] == "" {
		return desktopEntry{}, false
	}
	args, err := splitExec(unescapeValue(kv["Exec"]))
	if err != nil || len(args) == 0 {
		return desktopEntry{}, false
	}
	e.Name, e.Exec, e.TryExec, e.WMClass = kv["Name"], args, kv["TryExec"], kv["StartupWMClass"]
	e.Terminal, e.NoDisplay = kv["Terminal"] == "true", kv["NoDisplay"] == "true"
	if e.Name == "" {
		e.Name = id
	}
	return e, true
}

type limitedReader struct {
	f *os.File
	n int
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("desktop entry too large")
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= n
	return n, err
}

// unescapeValue undoes the string escapes of a desktop entry value.
func unescapeValue(v string) string {
	r := strings.NewReplacer(`\s`, " ", `\n`, "\n", `\t`, "\t", `\r`, "\r", `\\`, `\`)
	return r.Replace(v)
}

// splitExec splits an Exec value into arguments: unquoted spaces separate;
// inside double quotes a backslash escapes ", `, $ and \. No shell is
// involved, ever.
func splitExec(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	in, quoted, started := false, false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case in && ch == '\\' && i+1 < len(s) && strings.IndexByte("\"`$\\", s[i+1]) >= 0:
			i++
			cur.WriteByte(s[i])
		case ch == '"':
			in, quoted, started = !in, true, true
		case !in && (ch == ' ' || ch == '\t'):
			if started {
				args = append(args, cur.String())
				cur.Reset()
				started, quoted = false, false
			}
		default:
			cur.WriteByte(ch)
			started = true
		}
	}
	if in {
		return nil, errors.New("unterminated quote in Exec")
	}
	if started || quoted {
		args = append(args, cur.String())
	}
	return args, nil
}

// argv expands the entry's field codes: %f/%u take one of args, %F/%U all
// of them, %c the name, %k the file, %% a percent sign; %i and deprecated
// codes go. Args given to an entry that takes none are refused (ok false).
func (e desktopEntry) argv(args []string) ([]string, bool) {
	var out []string
	used := false
	for _, a := range e.Exec {
		switch a {
		case "%f", "%u":
			if len(args) > 1 {
				return nil, false
			}
			out = append(out, args...)
			used = true
			continue
		case "%F", "%U":
			out = append(out, args...)
			used = true
			continue
		case "%i", "%d", "%D", "%n", "%N", "%v", "%m":
			continue
		}
		var b strings.Builder
		for i := 0; i < len(a); i++ {
			if a[i] != '%' || i+1 == len(a) {
				b.WriteByte(a[i])
				continue
			}
			i++
			switch a[i] {
			case '%':
				b.WriteByte('%')
			case 'c':
				b.WriteString(e.Name)
			case 'k':
				b.WriteString(e.Path)
			}
		}
		out = append(out, b.String())
	}
	if len(args) > 0 && !used {
		return nil, false
	}
	return out, true
}
