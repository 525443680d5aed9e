package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/companion"
	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/docgen"
	"github.com/hostlink/hostlink/internal/ops"
)

var updateREADME = flag.Bool("update", false, "rewrite README.md's generated parts")

// TestREADME: README.md's tool tables are the registry's MCP tools, with
// every capability on (the companion's included), and its command-line reference is the CLI's
// definition; -update rewrites them.
func TestREADME(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	cfg := "[commands]\nenabled = true\n[computer]\nenabled = true\nclipboard = true\n[agents]\nenabled = true\n[companion]\nlisten = \"127.0.0.1:0\"\n" +
		"[[workdirs]]\nalias = \"w\"\npath = '" + home + "'\nagent_mode = \"read-only\"\n"
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Open(daemon.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tools := d.Registry.OpsFor(audit.MCPStdio)
	// The companion's tools have a table of their own, in its section,
	// whatever their capability: they are there only with a companion.
	var general, companionTools []*ops.Op
	for _, op := range tools {
		if slices.ContainsFunc(companion.Specs(), func(s ops.Spec) bool { return s.Name == op.Name }) {
			companionTools = append(companionTools, op)
		} else {
			general = append(general, op)
		}
	}
	var c cli
	k, err := parser(&c)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]string{"cli": docgen.Commands(k.Model)}
	for _, cp := range []ops.Capability{ops.Files, ops.Shell, ops.ComputerUse, ops.Agents} {
		parts["tools-"+string(cp)] = docgen.Tools(general, cp)
	}
	parts["tools-companion"] = docgen.Table(companionTools)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := docgen.Splice(string(b), parts)
	if err != nil {
		t.Fatal(err)
	}
	if *updateREADME {
		if err := os.WriteFile("../../README.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != string(b) {
		t.Errorf("README.md's generated parts differ from the program (%s): run go test ./cmd/hostlink -run TestREADME -update", firstDiff(string(b), want))
	}
	// Every MCP tool is in a table.
	for _, op := range tools {
		if !strings.Contains(want, "| `"+op.Name+"` |") {
			t.Errorf("%s (capability %s) is in no tool table", op.Name, op.Capability)
		}
	}
}

// TestEnableShellHelpSaysSandboxed: serve --help says what --enable-shell
// really does: commands run in the default sandbox, which is confining.
func TestEnableShellHelpSaysSandboxed(t *testing.T) {
	var c cli
	k, err := parser(&c)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range k.Model.Children {
		if n.Name != "serve" {
			continue
		}
		for _, f := range n.Flags {
			if f.Name == "enable-shell" {
				def := config.Default().Commands.Sandbox
				if def != "workdir" || !strings.Contains(f.Help, `default "workdir"`) || strings.Contains(f.Help, "with your permissions") {
					t.Fatalf("the default sandbox is %q; --enable-shell says %q", def, f.Help)
				}
				return
			}
		}
	}
	t.Fatal("serve has no --enable-shell")
}

// firstDiff says where a and b first differ, by line.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ": " + trunc(al[i]) + " ≠ " + trunc(bl[i])
		}
	}
	return "length"
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
