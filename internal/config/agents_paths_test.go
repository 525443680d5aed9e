package config

import (
	"strings"
	"testing"
)

// TestAgentPaths: runtime CLI paths are absolute or empty.
func TestAgentPaths(t *testing.T) {
	abs := t.TempDir()
	c, err := parse([]byte("[agents]\ncodex_path = '"+abs+"'\nqoder_path = \"\"\n"), "c.toml", t.TempDir())
	if err != nil || c.Agents.CodexPath != abs {
		t.Fatalf("%+v, %v", c, err)
	}
	_, err = parse([]byte("[agents]\nclaude_path = \"bin/claude\"\n"), "c.toml", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `agents.claude_path: "bin/claude" is not an absolute path`) {
		t.Fatalf("relative path: %v", err)
	}
}
