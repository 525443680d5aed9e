package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hostlink/hostlink/internal/logging"
	"github.com/hostlink/hostlink/internal/private"
)

// privateFix says how to make path private to the user.
func privateFix(path string, dir bool) string {
	if runtime.GOOS == "windows" {
		return `icacls "` + path + `" /inheritance:r /grant:r "%USERNAME%:(OI)(CI)F"`
	}
	if dir {
		return "chmod 700 " + path
	}
	return "chmod 600 " + path
}

// checkDirs checks the state, log and audit directories (and the audit log
// and key in them): they must be directories private to the user and
// writable. Missing ones are fine: hostlink creates them on first start.
func (e *env) checkDirs() {
	seen := map[string]bool{}
	for _, d := range []struct{ name, path string }{{"state dir", e.dirs.State}, {"log dir", e.dirs.Logs}, {"audit dir", e.dirs.Audit}} {
		if seen[d.path] {
			continue
		}
		seen[d.path] = true
		fi, err := os.Stat(d.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			e.add(d.name, OK, d.path+" (created on first start)", "")
			continue
		case err != nil:
			e.add(d.name, Fail, err.Error(), "check the permissions of "+filepath.Dir(d.path))
			continue
		case !fi.IsDir():
			e.add(d.name, Fail, d.path+" is not a directory", "move it away; hostlink creates the directory")
			continue
		}
		if err := private.Check(d.path); err != nil {
			e.add(d.name, Fail, fmt.Sprintf("%s: %v", d.path, err), privateFix(d.path, true))
			continue
		}
		if err := writable(d.path); err != nil {
			e.add(d.name, Fail, fmt.Sprintf("%s is not writable: %v", d.path, err), "give your user write access to "+d.path)
			continue
		}
		e.add(d.name, OK, d.path+" (private, writable)", "")
	}
	for _, f := range []struct{ name, path string }{{"audit log", e.dirs.AuditFile()}, {"audit key", e.dirs.AuditKey()}, {"audit head", e.dirs.AuditHead()}} {
		if _, err := os.Stat(f.path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := private.Check(f.path); err != nil {
			e.add(f.name, Fail, fmt.Sprintf("%s: %v", f.path, err), privateFix(f.path, false))
		} else {
			e.add(f.name, OK, f.path+" (private)", "")
		}
	}
}

// writable creates and removes a file in dir.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".hostlink-doctor-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// caseInsensitive reports whether dir folds case: a file created with an
// upper-case name is found under the lower-case one.
func caseInsensitive(dir string) (bool, error) {
	f, err := os.CreateTemp(dir, ".hostlink-doctor-CASE-*")
	if err != nil {
		return false, err
	}
	f.Close()
	defer os.Remove(f.Name())
	lower := filepath.Join(dir, strings.ToLower(filepath.Base(f.Name())))
	_, err = os.Stat(lower)
	return err == nil, nil
}

// checkWorkdirs checks each workdir: it exists, is a directory, is
// writable unless read-only, and whether it folds case.
func (e *env) checkWorkdirs() {
	type wd struct {
		alias, path string
		readOnly    bool
		isDefault   bool
	}
	var wds []wd
	for _, w := range e.cfg.Workdirs {
		wds = append(wds, wd{w.Alias, w.Path, w.ReadOnly, false})
	}
	if len(wds) == 0 {
		wds = append(wds, wd{"workspace", e.dirs.Workspace, false, true})
	}
	for _, w := range wds {
		name := "workdir " + w.alias
		fi, err := os.Stat(w.path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && w.isDefault:
			e.add(name, OK, w.path+" (created on first start)", "")
			continue
		case errors.Is(err, fs.ErrNotExist):
			e.add(name, Fail, w.path+" does not exist", fmt.Sprintf("create it (mkdir %s), or remove its [[workdirs]] entry (alias = %q, path = %q) from %s", w.path, w.alias, w.path, e.configPath))
			continue
		case err != nil:
			e.add(name, Fail, err.Error(), "check the permissions of "+w.path)
			continue
		case !fi.IsDir():
			e.add(name, Fail, w.path+" is not a directory", "point its [[workdirs]] path at a directory in "+e.configPath)
			continue
		}
		mode := "read-write"
		if w.readOnly {
			mode = "read-only"
		} else if err := writable(w.path); err != nil {
			e.add(name, Fail, fmt.Sprintf("%s is not writable: %v", w.path, err), "give your user write access, or set read_only = true in its [[workdirs]] entry in "+e.configPath)
			continue
		}
		detail := w.path + " (" + mode
		if !w.readOnly {
			if ci, err := caseInsensitive(w.path); err == nil {
				if ci {
					detail += ", case-insensitive: names differing only in case are the same file"
				} else {
					detail += ", case-sensitive"
				}
			}
		}
		e.add(name, OK, detail+")", "")
	}
}

// checkLog says where hostlink's own log goes.
func (e *env) checkLog() {
	file := filepath.Join(e.dirs.Logs, logging.FileName)
	detail := file
	if runtime.GOOS == "linux" {
		detail += "; under systemd: journalctl --user -u hostlink"
	}
	detail += " (level " + e.cfg.Log.Level + ")"
	e.add("log", OK, detail, "")
}
