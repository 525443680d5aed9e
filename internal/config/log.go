package config

import "strings"

// Log configures hostlink's own log (not the audit log).
type Log struct {
	Level        string `toml:"level"`          // debug, info, warn or error
	MaxFileBytes int64  `toml:"max_file_bytes"` // size at which the log file rotates
}

// LogLevels are the accepted log.level values, most verbose first.
var LogLevels = []string{"debug", "info", "warn", "error"}

func validLogLevel(s string) bool {
	for _, l := range LogLevels {
		if s == l {
			return true
		}
	}
	return false
}

// logProblems checks the [log] section.
func (c *Config) logProblems() []problem {
	if !validLogLevel(c.Log.Level) {
		return []problem{keyProblem("log.level", "%q is not a level: use %s", c.Log.Level, strings.Join(LogLevels, ", "))}
	}
	return nil
}
