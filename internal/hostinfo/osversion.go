package hostinfo

import "strings"

// osReleaseUnescape undoes the backslash escapes os-release(5) allows inside
// double quotes.
var osReleaseUnescape = strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\$`, `$`, "\\`", "`")

// parseOSRelease returns a human-readable OS name from the contents of an
// os-release(5) file: PRETTY_NAME, else NAME and VERSION_ID, else "".
func parseOSRelease(content string) string {
	vars := make(map[string]string)
	for line := range strings.Lines(content) {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(key, "#") {
			continue
		}
		if n := len(value); n >= 2 && value[0] == value[n-1] && (value[0] == '"' || value[0] == '\'') {
			quote := value[0]
			value = value[1 : n-1]
			if quote == '"' {
				value = osReleaseUnescape.Replace(value)
			}
		}
		vars[key] = value
	}
	if v := vars["PRETTY_NAME"]; v != "" {
		return v
	}
	return strings.TrimSpace(vars["NAME"] + " " + vars["VERSION_ID"])
}
