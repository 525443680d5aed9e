package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// server is one MCP server under test, started over stdio by a client.
type server struct {
	Name      string            `json:"name"`
	Version   string            `json:"version"`
	Command   []string          `json:"command"`
	Tools     map[string]string `json:"-"` // tool name -> input schema JSON
	ToolNames []string          `json:"tools"`
	// paths: "relative" (hostlink workdir-relative) or "absolute"
	Abs bool     `json:"-"`
	env []string `json:"-"`
	// beforeStart runs before each start (Desktop Commander: clear its history).
	beforeStart func()
	home        string
}

// recordTools keeps the server's tools (name -> input schema JSON) the
// first time any client lists them.
func (s *server) recordTools(names []string, schemas []string) {
	if s.Tools != nil {
		return
	}
	s.Tools = map[string]string{}
	for i, n := range names {
		s.Tools[n] = schemas[i]
		s.ToolNames = append(s.ToolNames, n)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (s *server) has(tool string) bool { _, ok := s.Tools[tool]; return ok }

// first returns the first of names the server offers, or "".
func (s *server) first(names ...string) string {
	for _, n := range names {
		if s.has(n) {
			return n
		}
	}
	return ""
}

// baseEnv is a small environment: no proxies or tokens from ours leak in.
func baseEnv(home string) []string {
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"TMPDIR=" + filepath.Join(home, "tmp"),
		// Some dependencies of the npm peers try to download browsers/binaries.
		"PUPPETEER_SKIP_DOWNLOAD=1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1",
		// Telemetry off where a documented switch exists.
		"DO_NOT_TRACK=1", "NO_UPDATE_NOTIFIER=1"}
	return env
}

func newHostlink(bin, home, root string) (*server, error) {
	if err := writeHostlinkConfig(home); err != nil {
		return nil, err
	}
	// `hostlink version` prints several lines (commit, date, go, target);
	// the first names the release, which is what the report's header needs.
	s := &server{Name: "hostlink", Version: firstLine(bin, "version"),
		Command: []string{bin, "mcp", "--allowed-root", root, "--enable-shell"},
		env:     append(baseEnv(home), "HOSTLINK_HOME="+home), home: home}
	return s, nil
}

// npmPackage reads name, version and the bin script of an installed package.
func npmPackage(nodeModules, pkg string) (version, script string, err error) {
	dir := filepath.Join(nodeModules, filepath.FromSlash(pkg))
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", "", err
	}
	var pj struct {
		Version string          `json:"version"`
		Bin     json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		return "", "", err
	}
	var one string
	var many map[string]string
	if json.Unmarshal(pj.Bin, &one) != nil {
		if err := json.Unmarshal(pj.Bin, &many); err != nil {
			return "", "", fmt.Errorf("%s: no bin", pkg)
		}
		for _, v := range many {
			if one == "" || strings.Contains(v, "index") {
				one = v
			}
		}
	}
	return pj.Version, filepath.Join(dir, filepath.FromSlash(one)), nil
}

func newServerFilesystem(nodeModules, home, root string) (*server, error) {
	v, script, err := npmPackage(nodeModules, "@modelcontextprotocol/server-filesystem")
	if err != nil {
		return nil, err
	}
	_ = os.MkdirAll(filepath.Join(home, "tmp"), 0o700)
	return &server{Name: "server-filesystem", Version: v, Abs: true,
		Command: []string{"node", script, root}, env: baseEnv(home), home: home}, nil
}

func newDesktopCommander(nodeModules, home, root string) (*server, error) {
	v, script, err := npmPackage(nodeModules, "@wonderwhy-er/desktop-commander")
	if err != nil {
		return nil, err
	}
	_ = os.MkdirAll(filepath.Join(home, "tmp"), 0o700)
	dir := filepath.Join(home, ".claude-server-commander")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// Its config lives in $HOME/.claude-server-commander/config.json (HOME is a
	// temp dir here). telemetryEnabled=false is its documented opt-out;
	// fileReadLineLimit is raised so the 10 MiB read returns the whole file,
	// as the other servers do (its default is 1,000 lines).
	cfg := map[string]any{
		"telemetryEnabled":   false,
		"allowedDirectories": []string{root},
		"fileReadLineLimit":  10000000,
		"fileWriteLineLimit": 100000,
		"defaultShell":       "/bin/sh",
		"blockedCommands":    []string{},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		return nil, err
	}
	env := append(baseEnv(home),
		// Documented env kill-switch for its telemetry (dist/utils/capture.js).
		"DESKTOP_COMMANDER_DISABLE_TELEMETRY=1",
		// Feature flags are fetched from desktopcommander.app unless DC_FLAG_URL
		// is set; point it at a closed loopback port so nothing leaves the machine.
		"DC_FLAG_URL=http://127.0.0.1:9/flags.json")
	// Desktop Commander appends every call to tool-history.jsonl and
	// claude_tool_call.log under its config dir, and its calls slow down as
	// they grow (about 250 ms per call after 1,600 calls here). Each start
	// begins with them removed, so one scenario's calls do not slow the next.
	clear := func() {
		_ = os.Remove(filepath.Join(dir, "tool-history.jsonl"))
		_ = os.Remove(filepath.Join(dir, "claude_tool_call.log"))
	}
	return &server{Name: "desktop-commander", Version: v, Abs: true,
		Command: []string{"node", script}, env: env, home: home, beforeStart: clear}, nil
}

// stderrSink receives the servers' stderr (nil discards it; -v shows it).
var stderrSink *os.File
