package mcpfront

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"

	"github.com/hostlink/hostlink/internal/private"
)

// Catalogue is what a daemon `hostlink mcp` started answered to the start
// of an MCP session: its initialize result and its tool list. The next
// front end that has to start a daemon answers its client's initialize and
// tools/list from it while the daemon starts, instead of after: the
// client's own work on the list (the TypeScript SDK compiles every output
// schema) then overlaps the daemon's start. The front end checks the
// catalogue against the daemon once it answers and tells the client when
// the tools differ (notifications/tools/list_changed), so a stale
// catalogue costs one more tools/list, never a wrong answer that stays.
type Catalogue struct {
	// Key names the daemon the catalogue came from: hostlink's build, the
	// daemon's command line and configuration (CatalogueKey).
	Key string `json:"key"`
	// Protocol is the protocol version the client asked for: the daemon's
	// initialize result depends on it.
	Protocol   string          `json:"protocol"`
	Initialize json.RawMessage `json:"initialize"`
	Tools      json.RawMessage `json:"tools"`
}

// CatalogueKey names a daemon started with args by executable (of build
// version) on configFile, in an environment env: what a started daemon's
// answers depend on. Desktop and agent tools also depend on what the
// machine has, which the check after the daemon answers covers.
func CatalogueKey(version, executable string, args []string, configFile string, env []string) string {
	h := sha256.New()
	write := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	write(version)
	write(executable)
	for _, a := range args {
		write(a)
	}
	write(configFile)
	if b, err := os.ReadFile(configFile); err == nil {
		h.Write(b)
	} else {
		write("no config file")
	}
	for _, kv := range env {
		write(kv)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// loadCatalogue reads the catalogue at path; it returns nil when there is
// none, or it is for another daemon (key) or is unreadable.
func loadCatalogue(path, key string) *Catalogue {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var c Catalogue
	if json.Unmarshal(b, &c) != nil || c.Key != key || len(c.Initialize) == 0 || len(c.Tools) == 0 {
		return nil
	}
	return &c
}

// save writes c to path unless old already holds the same.
func (c *Catalogue) save(path string, old *Catalogue) error {
	if path == "" || (old != nil && old.Key == c.Key && old.Protocol == c.Protocol &&
		bytes.Equal(old.Initialize, c.Initialize) && bytes.Equal(old.Tools, c.Tools)) {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return private.WriteFile(path, b)
}
