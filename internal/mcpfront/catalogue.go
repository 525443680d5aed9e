package mcpfront

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"

	"github.com/hostlink/hostlink/internal/private"
)

// Catalogue is what a daemon `hostlink mcp` started answered to the start
// of an MCP session: its initialize result (or, in the stateless protocol,
// its server/discover result) and its tool list, for each protocol version
// clients asked for. The next front end that has to start a daemon answers
// its client's session start and tools/list from it while the daemon
// starts, instead of after: the client's own work on the list (the
// TypeScript SDK compiles every output schema) then overlaps the daemon's
// start. The front end checks the catalogue against the daemon once it
// answers and tells the client when the tools differ
// (notifications/tools/list_changed), so a stale catalogue costs one more
// tools/list, never a wrong answer that stays.
type Catalogue struct {
	// Key names the daemon the catalogue came from: hostlink's build, the
	// daemon's command line and configuration (CatalogueKey).
	Key string `json:"key"`
	// Openings are the answers by protocol version, the latest kept first:
	// clients of different SDKs (and so versions) share one daemon, and
	// each answer depends on the version.
	Openings []*opening `json:"openings"`
}

// maxOpenings bounds the protocol versions a catalogue keeps: a client names
// the version it asks for, and a few are in use at a time.
const maxOpenings = 4

// opening is how the daemon answered the start of a session in one
// protocol version.
type opening struct {
	// Protocol is the protocol version the client asked for.
	Protocol string `json:"protocol"`
	// Initialize is the initialize result (the protocol versions with
	// sessions); Discover the server/discover result (the stateless one).
	Initialize json.RawMessage `json:"initialize,omitempty"`
	Discover   json.RawMessage `json:"discover,omitempty"`
	Tools      json.RawMessage `json:"tools"`
}

// answer is the answer to the session's start: server/discover's in the
// stateless protocol, initialize's otherwise; nil when the catalogue has
// the other.
func (st *opening) answer(stateless bool) json.RawMessage {
	if stateless {
		return st.Discover
	}
	return st.Initialize
}

// openingFor returns the answers for protocol, or nil.
func (c *Catalogue) openingFor(protocol string) *opening {
	if c == nil {
		return nil
	}
	for _, st := range c.Openings {
		if st.Protocol == protocol {
			return st
		}
	}
	return nil
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
	if json.Unmarshal(b, &c) != nil || c.Key != key {
		return nil
	}
	c.Openings = slices.DeleteFunc(c.Openings, func(st *opening) bool {
		return st == nil || (len(st.Initialize) == 0) == (len(st.Discover) == 0) || len(st.Tools) == 0
	})
	if len(c.Openings) == 0 {
		return nil
	}
	return &c
}

// keepOpening writes to path the catalogue old (nil: none) with st as the
// answers for st's protocol version, first, unless old already holds
// them.
func keepOpening(path, key string, old *Catalogue, st *opening) error {
	if path == "" {
		return nil
	}
	if prev := old.openingFor(st.Protocol); prev != nil && old.Key == key &&
		bytes.Equal(prev.Initialize, st.Initialize) && bytes.Equal(prev.Discover, st.Discover) && bytes.Equal(prev.Tools, st.Tools) {
		return nil
	}
	c := &Catalogue{Key: key, Openings: []*opening{st}}
	if old != nil && old.Key == key {
		for _, o := range old.Openings {
			if o.Protocol != st.Protocol && len(c.Openings) < maxOpenings {
				c.Openings = append(c.Openings, o)
			}
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return private.WriteFile(path, b)
}
