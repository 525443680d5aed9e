//go:build !windows

package browse

// invalidNames are directory names Unix file systems store but the wire
// refuses: control characters, invalid UTF-8, a bidi override.
var invalidNames = []string{"bad\x01ctl", "new\nline", "bad\xffutf8", "rtl\u202eexe", "zw\u200b"}
