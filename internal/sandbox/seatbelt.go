// Built on every Unix, not only macOS, so that the profile's tests run on
// Linux CI too; only spawn_darwin.go uses it in the binary.

//go:build unix

package sandbox

import (
	"slices"
	"strings"
)

// seatbeltProfile returns the Seatbelt (SBPL) profile of workdir mode for
// macOS's sandbox-exec: everything the user may do stays allowed except
// what the rules take away, later rules overriding earlier ones as SBPL
// has it. Writes are allowed only below the workdir, the writable paths,
// the private temporary directory and a few devices; the hidden and
// protected paths can be neither read nor listed nor written, except the
// command's own temporary directory (which lies in hostlink's state
// directory, among the other commands'); without network, IP is closed;
// signals and process inspection reach only the command's own sandbox.
func seatbeltProfile(pl plan, tmp string) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n")
	b.WriteString("(deny file-write*)\n(allow file-write*\n")
	for _, w := range append([]string{pl.workdir}, pl.writable...) {
		b.WriteString("  (subpath " + sbplString(w) + ")\n")
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper", "/dev/ptmx"} {
		b.WriteString("  (literal " + sbplString(d) + ")\n")
	}
	b.WriteString("  (regex #\"^/dev/ttys[0-9]+$\"))\n")
	// hostlink's program files stay readable, never writable; nor may a
	// directory holding one of hostlink's paths inside a writable root
	// be moved or removed (the rule is on the directory itself, not
	// what is below it).
	roots := append([]string{pl.workdir, tmp}, pl.writable...)
	if held := holders(append(slices.Clone(pl.protected), pl.guarded...), roots); len(held)+len(pl.guarded) > 0 {
		b.WriteString("(deny file-write*\n")
		for _, g := range pl.guarded {
			b.WriteString("  (subpath " + sbplString(g) + ")\n")
		}
		for _, h := range held {
			b.WriteString("  (literal " + sbplString(h) + ")\n")
		}
		b.WriteString(")\n")
	}
	if hidden := append(append([]string{}, pl.protected...), pl.hidden...); len(hidden) > 0 {
		b.WriteString("(deny file-read* file-write*\n")
		for _, h := range hidden {
			b.WriteString("  (subpath " + sbplString(h) + ")\n")
		}
		b.WriteString(")\n")
	}
	b.WriteString("(allow file-read* file-write* (subpath " + sbplString(tmp) + "))\n")
	if !pl.network {
		b.WriteString("(deny network-outbound (remote ip))\n(deny network-inbound (local ip))\n(deny network-bind (local ip))\n")
	}
	b.WriteString("(deny signal)\n(allow signal (target same-sandbox))\n")
	b.WriteString("(deny process-info*)\n(allow process-info* (target same-sandbox))\n")
	return b.String()
}

// sbplString quotes s as an SBPL string literal.
func sbplString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
