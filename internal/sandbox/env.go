package sandbox

import "strings"

// withoutTMPDIR returns env without its TMPDIR entries.
func withoutTMPDIR(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			out = append(out, kv)
		}
	}
	return out
}
