package config

import (
	"net"
	"path"
	"strings"
)

// Companion configures this hostlink as the runtime side of the companion
// route (see internal/companion): off while Listen and WSLHelper are empty.
type Companion struct {
	// Listen is the loopback host:port companions dial, e.g.
	// "127.0.0.1:7718".
	Listen string `toml:"listen"`
	// ContainerInterface allows a non-loopback Listen such as
	// "0.0.0.0:7718": only inside a container, whose port Docker forwards
	// from the host's loopback (docker run -p 127.0.0.1:7718:7718) to the
	// container's interface, never to its loopback.
	ContainerInterface bool `toml:"container_interface"`
	// MaxOutputBytes bounds the text of each output stream delivered from
	// a companion's command (the whole stream is still verified).
	MaxOutputBytes int64 `toml:"max_output_bytes"`
	// WSLHelper is the Windows hostlink.exe as seen from WSL, e.g.
	// "/mnt/c/Users/me/AppData/Local/hostlink/hostlink.exe". When set and
	// hostlink runs in a WSL distro with executable interop, it starts
	// that program as its companion over standard input and output (the
	// WSL interop route): no pairing, no listener.
	WSLHelper string `toml:"wsl_helper"`
	// WSLHelperCommands lets the runtime run Windows commands through the
	// helper (off by default, like hostlink companion --commands).
	WSLHelperCommands bool `toml:"wsl_helper_commands"`
}

func defaultCompanion() Companion { return Companion{MaxOutputBytes: 1 << 20} }

func (c *Config) fillCompanionDefaults() {
	setIfZero(&c.Companion.MaxOutputBytes, defaultCompanion().MaxOutputBytes)
}

func (c *Config) companionProblems() []problem {
	var probs []problem
	cc := c.Companion
	if cc.Listen != "" {
		host, _, err := net.SplitHostPort(cc.Listen)
		ip := net.ParseIP(host)
		switch {
		case err != nil:
			probs = append(probs, keyProblem("companion.listen", "%q is not host:port", cc.Listen))
		case cc.ContainerInterface:
		case strings.EqualFold(host, "localhost"), ip != nil && ip.IsLoopback():
		default:
			probs = append(probs, keyProblem("companion.listen", "%q is not a loopback address (inside a container, set container_interface = true)", cc.Listen))
		}
	}
	if cc.WSLHelper != "" && !path.IsAbs(cc.WSLHelper) {
		probs = append(probs, keyProblem("companion.wsl_helper", "%q is not an absolute path (the Windows hostlink.exe as seen from WSL, under /mnt/...)", cc.WSLHelper))
	}
	if cc.MaxOutputBytes < 1 || cc.MaxOutputBytes > 64<<20 {
		probs = append(probs, keyProblem("companion.max_output_bytes", "%d is out of range: must be 1 to %d", cc.MaxOutputBytes, 64<<20))
	}
	return probs
}
