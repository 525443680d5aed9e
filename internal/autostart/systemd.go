package autostart

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// systemdUnit renders the user unit. Restart=on-failure brings hostlink
// back after a crash; exit 78 (a configuration or consent problem that a
// restart cannot fix) is not retried. KillMode=control-group (systemd's
// default, stated so that no drop-in default changes it unnoticed) ends
// every process left in the service's cgroup when hostlink stops or dies:
// commands, agent runtimes and whatever they started, besides hostlink's
// own guarantees (internal/procs). Output goes to the journal, which
// hostlink detects (JOURNAL_STREAM) to log without its own timestamps.
func systemdUnit(s *Spec) ([]byte, error) {
	var b strings.Builder
	if s.packaged {
		b.WriteString("# Installed by the hostlink package. Start it now and at every login with:\n" +
			"#   systemctl --user enable --now " + SystemdUnit + "\n" +
			"# A unit written by `hostlink install` (in ~/.config/systemd/user) takes precedence.\n")
	} else {
		b.WriteString("# Written by `hostlink install`; `hostlink uninstall` removes it.\n")
	}
	b.WriteString("[Unit]\nDescription=hostlink local PC executor\n")
	b.WriteString("StartLimitIntervalSec=300\nStartLimitBurst=10\n\n")
	b.WriteString("[Service]\nType=exec\n")
	words := []string{s.Exe}
	words = append(words, s.Args...)
	quoted := make([]string, len(words))
	if strings.ContainsAny(s.Exe, `$"'\`) {
		// systemd refuses these in the executable's name, escaped or not.
		return nil, fmt.Errorf("autostart: systemd cannot start a program whose path contains $, quotes or backslashes (%s): move hostlink elsewhere", s.Exe)
	}
	for i, w := range words {
		q, err := systemdQuote(w)
		if err != nil {
			return nil, err
		}
		quoted[i] = q
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", strings.Join(quoted, " "))
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		q, err := systemdQuote(k + "=" + s.Env[k])
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "Environment=%s\n", q)
	}
	b.WriteString("KillMode=control-group\n")
	b.WriteString("Restart=on-failure\nRestartSec=5\nRestartPreventExitStatus=78\n\n")
	b.WriteString("[Install]\nWantedBy=default.target\n")
	return []byte(b.String()), nil
}

// systemdQuote makes one word of a unit's command line: double-quoted,
// with backslash and quote escaped, % doubled (specifiers) and $ doubled
// (variable expansion), so the word reaches hostlink unchanged.
func systemdQuote(w string) (string, error) {
	if strings.ContainsAny(w, "\n\r\x00") {
		return "", fmt.Errorf("autostart: %q cannot be written into a unit file", w)
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$")
	return `"` + r.Replace(w) + `"`, nil
}

// PackagedExe is where the .deb and .rpm packages install hostlink.
const PackagedExe = "/usr/bin/hostlink"

// PackagedSystemdUnit is the systemd user unit the .deb and .rpm packages
// install as /usr/lib/systemd/user/hostlink.service: the unit `hostlink
// install` writes, running the packaged binary, with a header saying where
// it came from. packaging/systemd/hostlink.service is this output; a test
// keeps the two equal.
func PackagedSystemdUnit() ([]byte, error) {
	return systemdUnit(&Spec{Kind: Systemd, Exe: PackagedExe, Args: []string{"serve"}, packaged: true})
}
