package procs

import (
	"sort"
	"strings"
)

// Baseline variables a child inherits from hostlink; everything else in
// hostlink's environment (its token, cloud credentials, ...) stays behind.
var (
	unixBaseline    = []string{"HOME", "PATH", "LANG", "TZ", "TMPDIR", "USER", "SHELL"}
	windowsBaseline = []string{
		"USERPROFILE", "HOMEDRIVE", "HOMEPATH", "Path", "SystemRoot", "TEMP",
		"TMP", "ComSpec", "OS", "windir", "LOCALAPPDATA", "APPDATA",
	}
)

// Environ returns a child's environment for goos: the variables of parent
// (in os.Environ form) that are in the safe baseline, HOME and USERPROFILE
// both set (each from the other when missing; on Windows HOME falls back to
// HOMEDRIVE+HOMEPATH), PYTHONIOENCODING=utf-8, and then extra on top. On
// Windows names compare without case, so an extra "PATH" replaces the
// parent's "Path". The result is sorted and has one entry per name.
func Environ(goos string, parent []string, extra map[string]string) []string {
	windows := goos == "windows"
	e := envSet{fold: windows}
	for _, kv := range parent {
		k, v, ok := strings.Cut(kv, "=")
		// Windows keeps per-drive directories as "=C:=C:\dir"; never pass.
		if !ok || k == "" {
			continue
		}
		if inBaseline(k, windows) {
			e.set(k, v)
		}
	}
	if windows {
		if _, ok := e.get("HOME"); !ok {
			if v, ok := e.get("USERPROFILE"); ok {
				e.set("HOME", v)
			} else if d, ok := e.get("HOMEDRIVE"); ok {
				p, _ := e.get("HOMEPATH")
				e.set("HOME", d+p)
			}
		}
	}
	if v, ok := e.get("HOME"); ok {
		if _, ok := e.get("USERPROFILE"); !ok {
			e.set("USERPROFILE", v)
		}
	} else if v, ok := e.get("USERPROFILE"); ok {
		e.set("HOME", v)
	}
	e.set("PYTHONIOENCODING", "utf-8")
	// Sorted, so that of two names equal without case the same one wins
	// every time.
	names := make([]string, 0, len(extra))
	for k := range extra {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		e.set(k, extra[k])
	}
	return e.list()
}

func inBaseline(name string, windows bool) bool {
	if windows {
		for _, b := range windowsBaseline {
			if strings.EqualFold(name, b) {
				return true
			}
		}
		return false
	}
	if strings.HasPrefix(name, "LC_") {
		return true
	}
	for _, b := range unixBaseline {
		if name == b {
			return true
		}
	}
	return false
}

// envSet is an environment keyed by name, without case when fold is set.
// A later set of a name replaces the earlier entry and its spelling.
type envSet struct {
	fold bool
	m    map[string][2]string // key → {name as given, value}
}

func (e *envSet) key(name string) string {
	if e.fold {
		return strings.ToUpper(name)
	}
	return name
}

func (e *envSet) set(name, value string) {
	if e.m == nil {
		e.m = map[string][2]string{}
	}
	e.m[e.key(name)] = [2]string{name, value}
}

func (e *envSet) get(name string) (string, bool) {
	kv, ok := e.m[e.key(name)]
	return kv[1], ok
}

func (e *envSet) list() []string {
	out := make([]string, 0, len(e.m))
	for _, kv := range e.m {
		out = append(out, kv[0]+"="+kv[1])
	}
	sort.Strings(out)
	return out
}
