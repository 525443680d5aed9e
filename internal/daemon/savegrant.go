package daemon

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/errcode"
)

// CodeNotSaveable: the grant has no counterpart in the configuration (a
// session ends with its client; an argv prefix is not an exact line).
const CodeNotSaveable errcode.Code = "GRANT_NOT_SAVEABLE"

// SaveGrant shows the TOML that saving grant id writes to the
// configuration file and, with apply, writes it and puts it in force
// through Reload: the same validated reload as `hostlink reload`. A file
// the reload refuses is put back as it was. Only the one key changes:
// the rest of the file, comments included, is kept byte for byte.
func (d *Daemon) SaveGrant(id string, apply bool, by string) (apitype.SaveGrantResult, error) {
	g, ok := d.Approvals().Grant(id)
	if !ok {
		return apitype.SaveGrantResult{}, errcode.New(approvals.CodeGrantNotFound, "no grant in force has id %q", id)
	}
	d.pol.mu.Lock()
	path := d.pol.cfgPath
	old, err := os.ReadFile(path)
	d.pol.mu.Unlock()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return apitype.SaveGrantResult{}, errcode.New(errcode.Internal, "the configuration cannot be read: %v", err)
	}
	table, key, value, err := d.grantRule(g)
	if err != nil {
		return apitype.SaveGrantResult{}, err
	}
	line, err := tomlLine(key, value)
	if err != nil {
		return apitype.SaveGrantResult{}, err
	}
	res := apitype.SaveGrantResult{Config: path, Table: table, TOML: "[" + table + "]\n" + line}
	if !apply {
		return res, nil
	}
	doc, err := setKey(old, table, key, line)
	if err != nil {
		return res, err
	}
	if err := writeAtomic(path, doc); err != nil {
		return res, errcode.New(errcode.Internal, "the configuration cannot be written: %v", err)
	}
	reload, err := d.Reload(by)
	if err != nil {
		if old == nil {
			os.Remove(path)
		} else if rerr := writeAtomic(path, old); rerr != nil {
			return res, errcode.New(errcode.Internal, "the reload refused the saved configuration (%v), and putting the old one back failed: %v", err, rerr)
		}
		return res, err
	}
	d.Approvals().MarkSaved(id)
	res.Applied, res.Reload = true, &reload
	return res, nil
}

// grantRule is the configuration rule that keeps allowing what g covers:
// its table, key and the key's new value (the rules already there, plus
// g's).
func (d *Daemon) grantRule(g approvals.Grant) (table, key string, value any, err error) {
	if g.Workdir == "" {
		return "", "", nil, errcode.New(CodeNotSaveable, "a %s grant has no configuration rule", g.Scope)
	}
	table = "policy.workdirs." + tomlKey(g.Workdir)
	rules := d.Config.Policy.Workdirs[g.Workdir]
	if cur, ok := d.policyFileWorkdir(g.Workdir); ok {
		rules = cur
	}
	switch g.Scope {
	case approvals.ScopeClass:
		// The window does not carry over: a saved class is allowed in
		// this workdir until the configuration changes.
		return table, g.Class, "allow", nil
	case approvals.ScopeCommand:
		return table, "allow_commands", appendNew(rules.AllowCommands, g.CommandLine), nil
	case approvals.ScopePath:
		if strings.ContainsAny(g.PathPrefix, `*?[]{}\`) {
			return "", "", nil, errcode.New(CodeNotSaveable, "the directory %q holds glob characters, so no allow_paths glob names exactly it", g.PathPrefix)
		}
		if g.PathPrefix == "." || g.PathPrefix == "" {
			return "", "", nil, errcode.New(CodeNotSaveable, "a path grant for the whole workdir has no rule: save files_write = \"allow\" deliberately")
		}
		// DIR/**/* and not DIR/**, which also matches DIR itself: the
		// rule, like the grant, covers what is below the directory, not
		// deleting or moving the directory.
		return table, "allow_paths", appendNew(rules.AllowPaths, g.PathPrefix+"/**/*"), nil
	}
	return "", "", nil, errcode.New(CodeNotSaveable, "a %s grant has no configuration rule: allow_commands holds exact lines only", g.Scope)
}

// policyFileWorkdir is the workdir's rules as the configuration file has
// them now (it may have changed since the daemon started).
func (d *Daemon) policyFileWorkdir(alias string) (rules config.PolicyRules, ok bool) {
	cfg, err := config.Load(d.pol.cfgPath, d.pol.explicit)
	if err != nil {
		return rules, false
	}
	rules, ok = cfg.Policy.Workdirs[alias]
	return rules, ok
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(slices.Clip(list), s)
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// tomlKey is k as a TOML key: bare when it can be, else quoted.
func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	b, _ := toml.Marshal(map[string]string{k: ""})
	return string(bytes.TrimSpace(bytes.SplitN(b, []byte(" = "), 2)[0]))
}

// tomlLine is `key = value` as go-toml writes it, one line.
func tomlLine(key string, value any) (string, error) {
	b, err := toml.Marshal(map[string]any{key: value})
	if err != nil {
		return "", errcode.New(errcode.Internal, "the rule cannot be written as TOML: %v", err)
	}
	return string(bytes.TrimSpace(b)) + "\n", nil
}

// setKey returns doc with key of table set to line: the key's present
// definition replaced, or the line added right under the table's header,
// or the table appended. A document that defines the table some other
// way (dotted keys, an inline table) comes out invalid, and the reload
// refuses it.
func setKey(doc []byte, table, key, line string) ([]byte, error) {
	lines := strings.SplitAfter(string(doc), "\n")
	header := -1
	for i, l := range lines {
		if strings.TrimSpace(stripComment(l)) == "["+table+"]" {
			header = i
			break
		}
	}
	if header < 0 {
		var b strings.Builder
		b.Write(doc)
		if len(doc) > 0 && !bytes.HasSuffix(doc, []byte("\n")) {
			b.WriteString("\n")
		}
		b.WriteString("\n[" + table + "]\n" + line)
		return []byte(b.String()), nil
	}
	for i := header + 1; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if strings.HasPrefix(t, "[") {
			break
		}
		if k, _, ok := strings.Cut(t, "="); ok && strings.TrimSpace(k) == key {
			// The definition runs until the lines read so far parse as
			// one key (an array may span lines).
			for j := i; j < len(lines); j++ {
				var v map[string]any
				if toml.Unmarshal([]byte(strings.Join(lines[i:j+1], "")), &v) == nil {
					out := slices.Concat(lines[:i], []string{line}, lines[j+1:])
					return []byte(strings.Join(out, "")), nil
				}
			}
			return nil, errcode.New(errcode.InvalidArgument, "the configuration's %s.%s cannot be read; fix it by hand", table, key)
		}
	}
	out := slices.Concat(lines[:header+1], []string{line}, lines[header+1:])
	return []byte(strings.Join(out, "")), nil
}

func stripComment(l string) string {
	if i := strings.Index(l, "#"); i >= 0 {
		return l[:i]
	}
	return l
}

// writeAtomic replaces path with data (temp file and rename), keeping its
// mode, or 0600 for a new file.
func writeAtomic(path string, data []byte) error {
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".config-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
