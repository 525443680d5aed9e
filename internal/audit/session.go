package audit

import (
	"crypto/sha256"
	"encoding/hex"
)

// SessionRef names a client session (an MCP session, a control-channel
// connection; see ops.Caller.Session) in the audit log: "s_" and 12 hex
// digits of its key's SHA-256. Records of one session share it, whatever
// connection carried each call; the key itself, which an HTTP session's
// id is part of, is never written.
func SessionRef(key string) string {
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return "s_" + hex.EncodeToString(sum[:6])
}
