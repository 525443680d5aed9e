package config

import (
	"fmt"
	"path/filepath"
	"slices"
)

// SandboxModes are the values of commands.sandbox.
var SandboxModes = []string{"workdir", "off"}

// NetworkModes are the values of commands.network.
var NetworkModes = []string{"off", "on"}

// Limits of the sandbox's path lists, so a config cannot make every
// command's set-up arbitrarily slow.
const maxSandboxPaths = 256

// expandSandboxPaths expands ~ in commands.writable and commands.hidden.
func (c *Config) expandSandboxPaths(home string) []problem {
	var probs []problem
	for _, l := range []struct {
		key   string
		paths []string
	}{{"commands.writable", c.Commands.Writable}, {"commands.hidden", c.Commands.Hidden}} {
		for i, p := range l.paths {
			e, err := expandHome(p, home)
			if err != nil {
				probs = append(probs, keyProblem(fmt.Sprintf("%s[%d]", l.key, i), "%v", err))
				continue
			}
			if filepath.IsAbs(e) {
				e = filepath.Clean(e)
			}
			l.paths[i] = e
		}
	}
	return probs
}

func (c *Config) sandboxProblems() []problem {
	var probs []problem
	cc := c.Commands
	if !slices.Contains(SandboxModes, cc.Sandbox) {
		probs = append(probs, keyProblem("commands.sandbox", "%q is not one of %q", cc.Sandbox, SandboxModes))
	}
	if !slices.Contains(NetworkModes, cc.Network) {
		probs = append(probs, keyProblem("commands.network", "%q is not one of %q", cc.Network, NetworkModes))
	}
	for _, l := range []struct {
		key   string
		paths []string
	}{{"commands.writable", cc.Writable}, {"commands.hidden", cc.Hidden}} {
		if len(l.paths) > maxSandboxPaths {
			probs = append(probs, keyProblem(l.key, "%d paths is too many: at most %d", len(l.paths), maxSandboxPaths))
		}
		for i, p := range l.paths {
			if !filepath.IsAbs(p) {
				probs = append(probs, keyProblem(fmt.Sprintf("%s[%d]", l.key, i), "%q is not an absolute path (or ~/...)", p))
			}
		}
	}
	return probs
}
