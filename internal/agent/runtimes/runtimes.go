// Package runtimes lists the agent runtime adapters hostlink ships (Codex,
// Claude Code, Qoder) for the engine's registry. Each is created at first
// use, so a runtime that is absent or broken only reports so in its
// readiness; the others, and hostlink, are unaffected.
package runtimes

import (
	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/claude"
	"github.com/hostlink/hostlink/internal/agent/codex"
	"github.com/hostlink/hostlink/internal/agent/qoder"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// Paths are configured CLI locations: an executable, or a directory
// holding the npm install (node_modules, an npm prefix, or the package).
// Empty: found on PATH.
type Paths struct {
	Codex, Claude, Qoder string
	// Sandbox, if set, confines the runtimes that hostlink can confine
	// (Codex's app-server): see codex.Runtime.Sandbox.
	Sandbox *sandbox.Policy
}

// Factories returns the adapters by runtime name.
func Factories(p Paths) map[string]agent.Factory {
	return map[string]agent.Factory{
		codex.Name:  func() (agent.Runtime, error) { return &codex.Runtime{Path: p.Codex, Sandbox: p.Sandbox}, nil },
		claude.Name: func() (agent.Runtime, error) { return &claude.Runtime{Path: p.Claude}, nil },
		qoder.Name:  func() (agent.Runtime, error) { return &qoder.Runtime{Path: p.Qoder}, nil },
	}
}
