package agentcli

import "regexp"

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+[\w.+-]*`)

// Version is the first version number (1.2.3, with any suffix) in a
// CLI's output, or "".
func Version(out string) string { return versionRE.FindString(out) }
