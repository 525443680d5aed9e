package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
)

// Validate reports every invalid value in c, naming each key. It expects
// defaults filled in and paths expanded, as Load leaves them: a zero limit
// or a path starting with ~ is invalid here.
func (c *Config) Validate() error {
	probs := c.problems()
	errs := make([]error, len(probs))
	for i, p := range probs {
		errs[i] = errors.New(p.text)
	}
	return errors.Join(errs...)
}

func (c *Config) problems() []problem {
	var probs []problem
	seen := make(map[string]int) // lowercased alias → index of its workdir
	for i, w := range c.Workdirs {
		key := fmt.Sprintf("workdirs[%d]", i)
		switch {
		case w.Alias == "":
			probs = append(probs, keyProblem(key+".alias", "required"))
		case !validAlias(w.Alias):
			probs = append(probs, keyProblem(key+".alias", "%q is not a valid alias: use 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit", w.Alias))
		}
		if w.Alias != "" {
			// Aliases must be lowercase anyway; folding case here also
			// reports "Docs" as a duplicate of "docs", not only as invalid.
			folded := strings.ToLower(w.Alias)
			if j, dup := seen[folded]; dup {
				probs = append(probs, keyProblem(key+".alias", "duplicate alias %q (also workdirs[%d])", w.Alias, j))
			} else {
				seen[folded] = i
			}
		}
		switch w.Hardlinks {
		case "", "refuse", "allow":
		default:
			probs = append(probs, keyProblem(key+".hardlinks", "%q is not one of refuse, allow", w.Hardlinks))
		}
		switch {
		case w.Path == "":
			probs = append(probs, keyProblem(key+".path", "required"))
		case !filepath.IsAbs(w.Path):
			probs = append(probs, keyProblem(key+".path", "%q is not an absolute path", w.Path))
		}
	}
	for _, b := range c.bounds() {
		if b.value < b.min || b.value > b.max {
			probs = append(probs, keyProblem(b.key, "%d is out of range: must be %d to %d", b.value, b.min, b.max))
		}
	}
	probs = append(probs, c.logProblems()...)
	probs = append(probs, c.agentProblems()...)
	probs = append(probs, c.sandboxProblems()...)
	probs = append(probs, c.policyProblems()...)
	probs = append(probs, c.companionProblems()...)
	probs = append(probs, c.updateProblems()...)
	probs = append(probs, c.meshProblems()...)
	if err := checkListen(c.Server.Listen); err != nil {
		probs = append(probs, keyProblem("server.listen", "%v", err))
	}
	return probs
}

// validAlias reports whether s matches [a-z0-9][a-z0-9_-]{0,63}.
func validAlias(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

type bound struct {
	key             string
	value, min, max int64
}

// bounds lists the numeric settings with their allowed ranges.
func (c *Config) bounds() []bound {
	const (
		KiB = 1 << 10
		MiB = 1 << 20
		GiB = 1 << 30
	)
	return []bound{
		{"limits.max_read_bytes", c.Limits.MaxReadBytes, 1, 1 * GiB},
		{"limits.max_write_bytes", c.Limits.MaxWriteBytes, 1, 1 * GiB},
		{"limits.max_list_entries", int64(c.Limits.MaxListEntries), 1, 100_000},
		{"limits.max_search_matches", int64(c.Limits.MaxSearchMatches), 1, 100_000},
		{"limits.max_search_bytes", c.Limits.MaxSearchBytes, 1, 16 * GiB},
		{"limits.max_search_file_bytes", c.Limits.MaxSearchFileBytes, 1, 1 * GiB},
		{"server.max_connections", int64(c.Server.MaxConnections), 16, 65536},
		{"server.max_connections_per_peer", int64(c.Server.MaxConnectionsPerPeer), 1, int64(c.Server.MaxConnections)},
		{"audit.max_file_bytes", c.Audit.MaxFileBytes, 64 * KiB, 4 * GiB},
		{"audit.max_total_bytes", c.Audit.MaxTotalBytes, 2 * c.Audit.MaxFileBytes, 1 << 40},
		{"audit.refusal_interval_seconds", int64(c.Audit.RefusalIntervalSeconds), 1, 3600},
		{"commands.max_concurrent", int64(c.Commands.MaxConcurrent), 1, 64},
		{"commands.default_timeout_seconds", int64(c.Commands.DefaultTimeoutSeconds), 1, int64(c.Commands.MaxTimeoutSeconds)},
		{"commands.max_timeout_seconds", int64(c.Commands.MaxTimeoutSeconds), 1, 7 * 24 * 3600},
		{"commands.inline_output_bytes", int64(c.Commands.InlineOutputBytes), 1, 1 * MiB},
		{"commands.max_stream_bytes", c.Commands.MaxStreamBytes, 1, 64 * GiB},
		{"commands.retention_hours", int64(c.Commands.RetentionHours), 1, 365 * 24},
		{"link.max_concurrent", int64(c.Link.MaxConcurrent), 1, 256},
		{"computer.settle_ms", int64(c.Computer.SettleMS), 1, 5000},
		{"computer.max_accessibility_bytes", int64(c.Computer.MaxAccessibilityBytes), 1, 1 * MiB},
		{"log.max_file_bytes", c.Log.MaxFileBytes, 64 * KiB, 1 * GiB},
	}
}

// checkListen accepts host:port where the host is a loopback IP literal or
// localhost. hostlink acts on this machine for whoever reaches it, so it
// must never listen on the network; a hostname other than localhost could
// resolve to anything.
func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port must be a number from 0 to 65535", addr)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q: host must be a loopback address (127.0.0.0/8 or ::1) or localhost", addr)
}
