package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// parse decodes doc, the contents of the file name, fills in defaults,
// expands ~ in workdir paths to home, and validates the result.
func parse(doc []byte, name, home string) (*Config, error) {
	ix := indexKeys(doc)
	var c Config
	err := toml.NewDecoder(bytes.NewReader(doc)).DisallowUnknownFields().Decode(&c)
	if err != nil {
		return nil, decodeError(name, ix, err)
	}
	c.fillDefaults()
	var probs []problem
	for i := range c.Workdirs {
		w := &c.Workdirs[i]
		p, err := expandHome(w.Path, home)
		if err != nil {
			probs = append(probs, keyProblem(fmt.Sprintf("workdirs[%d].path", i), "%v", err))
			continue
		}
		if filepath.IsAbs(p) {
			p = filepath.Clean(p)
		}
		w.Path = p
	}
	probs = append(probs, c.expandSandboxPaths(home)...)
	probs = append(probs, c.expandUpdatePaths(home)...)
	if len(probs) == 0 {
		probs = c.problems()
	}
	if len(probs) > 0 {
		for i := range probs {
			probs[i].line = ix.line(probs[i].key)
		}
		return nil, fileError(name, probs)
	}
	return &c, nil
}

// fillDefaults replaces zero values, which the file either left out or set
// to 0, with the defaults.
func (c *Config) fillDefaults() {
	d := Default()
	setIfZero(&c.Limits.MaxReadBytes, d.Limits.MaxReadBytes)
	setIfZero(&c.Limits.MaxWriteBytes, d.Limits.MaxWriteBytes)
	setIfZero(&c.Limits.MaxListEntries, d.Limits.MaxListEntries)
	setIfZero(&c.Limits.MaxSearchMatches, d.Limits.MaxSearchMatches)
	setIfZero(&c.Limits.MaxSearchBytes, d.Limits.MaxSearchBytes)
	setIfZero(&c.Limits.MaxSearchFileBytes, d.Limits.MaxSearchFileBytes)
	setIfZero(&c.Server.Listen, d.Server.Listen)
	setIfZero(&c.Server.MaxConnections, d.Server.MaxConnections)
	setIfZero(&c.Server.MaxConnectionsPerPeer, min(d.Server.MaxConnectionsPerPeer, c.Server.MaxConnections))
	setIfZero(&c.Audit.MaxFileBytes, d.Audit.MaxFileBytes)
	// An unset total never falls below what two files take.
	setIfZero(&c.Audit.MaxTotalBytes, max(d.Audit.MaxTotalBytes, 2*c.Audit.MaxFileBytes))
	setIfZero(&c.Audit.RefusalIntervalSeconds, d.Audit.RefusalIntervalSeconds)
	setIfZero(&c.Commands.MaxConcurrent, d.Commands.MaxConcurrent)
	setIfZero(&c.Commands.MaxTimeoutSeconds, d.Commands.MaxTimeoutSeconds)
	// An unset default timeout never exceeds a lowered maximum.
	setIfZero(&c.Commands.DefaultTimeoutSeconds, min(d.Commands.DefaultTimeoutSeconds, c.Commands.MaxTimeoutSeconds))
	setIfZero(&c.Commands.InlineOutputBytes, d.Commands.InlineOutputBytes)
	setIfZero(&c.Commands.MaxStreamBytes, d.Commands.MaxStreamBytes)
	setIfZero(&c.Commands.RetentionHours, d.Commands.RetentionHours)
	setIfZero(&c.Commands.Sandbox, d.Commands.Sandbox)
	setIfZero(&c.Commands.Network, d.Commands.Network)
	setIfZero(&c.Link.MaxConcurrent, d.Link.MaxConcurrent)
	setIfZero(&c.Computer.SettleMS, d.Computer.SettleMS)
	setIfZero(&c.Computer.MaxAccessibilityBytes, d.Computer.MaxAccessibilityBytes)
	setIfZero(&c.Log.Level, d.Log.Level)
	setIfZero(&c.Log.MaxFileBytes, d.Log.MaxFileBytes)
	c.fillAgentDefaults()
	c.fillPolicyDefaults()
	c.fillCompanionDefaults()
	setIfZero(&c.Update.URL, d.Update.URL)
	c.fillMeshDefaults()
}

func setIfZero[T comparable](p *T, def T) {
	var zero T
	if *p == zero {
		*p = def
	}
}

// expandHome replaces a leading ~ or ~/ (also ~\ on Windows) with home.
// Other paths, including ~user/..., are returned unchanged.
func expandHome(p, home string) (string, error) {
	if p != "~" && !(len(p) > 1 && p[0] == '~' && os.IsPathSeparator(p[1])) {
		return p, nil
	}
	if home == "" {
		return "", errors.New("cannot expand ~: the home directory is unknown")
	}
	return filepath.Join(home, p[1:]), nil
}

// decodeError turns go-toml's errors, which carry a position and a key
// relative to the innermost table, into problems that name the full key.
func decodeError(name string, ix *keyIndex, err error) error {
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case errors.As(err, &strict):
		probs := make([]problem, len(strict.Errors))
		for i := range strict.Errors {
			key, line := ix.locate(&strict.Errors[i])
			probs[i] = problem{line: line, text: fmt.Sprintf("unknown key %q", key)}
			if s := suggest(key); s != "" {
				probs[i].text += fmt.Sprintf(" (did you mean %q?)", s)
			}
		}
		return fileError(name, probs)
	case errors.As(err, &de):
		p := problem{text: describeDecodeError(de)}
		p.key, p.line = ix.locate(de)
		if p.key != "" {
			p.text = p.key + ": " + p.text
		}
		return fileError(name, []problem{p})
	}
	return fmt.Errorf("%s: %w", name, err)
}

// describeDecodeError returns de's message, rewriting go-toml's type
// mismatch ("cannot decode TOML string into struct field
// config.Limits.MaxReadBytes of type int64"), which names Go types, in the
// terms of the file.
func describeDecodeError(de *toml.DecodeError) string {
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	rest, ok := strings.CutPrefix(msg, "cannot decode TOML ")
	if !ok {
		return msg
	}
	got, rest, ok := strings.Cut(rest, " into ")
	if !ok {
		return msg
	}
	_, goType, ok := strings.Cut(rest, " of type ")
	if !ok {
		return msg
	}
	var want string
	switch {
	case goType == "string":
		want = "a string"
	case goType == "bool":
		want = "true or false"
	case strings.HasPrefix(goType, "int"):
		want = "an integer"
	case strings.HasPrefix(goType, "[]"):
		want = "an array of tables"
	default:
		want = "a table"
	}
	return fmt.Sprintf("expected %s, got a TOML %s", want, got)
}
