package config

import (
	"net"
	"net/url"
	"path/filepath"
	"strings"
)

// Update configures the update check: off unless the user turns it on.
// When on, the daemon fetches the latest release's SHA256SUMS and its
// signature once a day (nothing else, and it sends nothing about this
// machine), and status, doctor and the console say when a newer release
// is out. It never installs anything: `hostlink update` does.
type Update struct {
	Check bool `toml:"check"`
	// URL is the latest release's directory (a mirror's, for instance).
	URL string `toml:"url"`
	// AllowedSigners is an allowed-signers file whose keys sign the
	// releases at URL instead of the hostlink release key (a mirror that
	// signs its own; tests).
	AllowedSigners string `toml:"allowed_signers"`
}

// DefaultUpdateURL is where the latest release's files are.
const DefaultUpdateURL = "https://github.com/hostlink/hostlink/releases/latest/download"

func (c *Config) expandUpdatePaths(home string) []problem {
	if c.Update.AllowedSigners == "" {
		return nil
	}
	p, err := expandHome(c.Update.AllowedSigners, home)
	if err != nil {
		return []problem{keyProblem("update.allowed_signers", "%v", err)}
	}
	if filepath.IsAbs(p) {
		p = filepath.Clean(p)
	}
	c.Update.AllowedSigners = p
	return nil
}

func (c *Config) updateProblems() []problem {
	var probs []problem
	u := c.Update
	if p, err := url.Parse(u.URL); err != nil || !(p.Scheme == "https" && p.Host != "" || p.Scheme == "http" && loopbackHost(p.Hostname())) {
		probs = append(probs, keyProblem("update.url", "%q is not an https:// URL (or http:// to a loopback address)", u.URL))
	}
	if u.AllowedSigners != "" && !filepath.IsAbs(u.AllowedSigners) {
		probs = append(probs, keyProblem("update.allowed_signers", "%q is not an absolute path", u.AllowedSigners))
	}
	return probs
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
