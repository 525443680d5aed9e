package hostinfo

import (
	"fmt"
	"strings"
)

// NormalizeUUID returns s as a lowercase dashed UUID (8-4-4-4-12). It accepts
// the forms the machine ID sources use: 32 hex digits (/etc/machine-id), or
// dashed in either case (IOPlatformUUID, MachineGuid), optionally in braces
// and surrounded by whitespace.
//
// The nil UUID is rejected: sources hold it when they were never initialized,
// and every such host would share it.
func NormalizeUUID(s string) (string, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		t = t[1 : len(t)-1]
	}
	var hex []byte
	switch len(t) {
	case 32:
		hex = []byte(t)
	case 36:
		for i := 0; i < len(t); i++ {
			isDash := i == 8 || i == 13 || i == 18 || i == 23
			if isDash != (t[i] == '-') {
				return "", notUUID(s)
			}
			if !isDash {
				hex = append(hex, t[i])
			}
		}
	default:
		return "", notUUID(s)
	}
	zero := true
	for i, c := range hex {
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			hex[i] = c - 'A' + 'a'
		default:
			return "", notUUID(s)
		}
		zero = zero && c == '0'
	}
	if zero {
		return "", fmt.Errorf("hostinfo: machine ID is the nil UUID")
	}
	h := string(hex)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}

func notUUID(s string) error {
	return fmt.Errorf("hostinfo: machine ID %q is not a UUID", s)
}
