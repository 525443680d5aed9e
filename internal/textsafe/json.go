package textsafe

import (
	"unicode/utf8"
)

// JSON returns the JSON document b with every hidden character inside its
// strings written as a \u escape, so that printing it shows them. The
// result is JSON with the same value: encoding/json leaves DEL, C1
// controls, bidirectional overrides and zero-width characters unescaped,
// and json.Indent keeps them. A byte that is not UTF-8 becomes \ufffd, as
// encoding/json would decode it. b is returned unchanged when nothing is
// hidden.
func JSON(b []byte) []byte {
	if !jsonNeeds(b) {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	inString, escaped := false, false
	for i := 0; i < len(b); {
		c := b[i]
		if !inString || c < utf8.RuneSelf {
			switch {
			case !inString:
				inString = c == '"'
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case Hidden(rune(c)):
				out = appendU(out, rune(c))
				i++
				continue
			}
			out = append(out, c)
			i++
			continue
		}
		escaped = false
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = appendU(out, utf8.RuneError)
		case Hidden(r):
			out = appendU(out, r)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// jsonNeeds reports whether any string in b holds a hidden character or
// invalid UTF-8. Outside strings, valid JSON has only ASCII.
func jsonNeeds(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && n == 1) || Hidden(r) {
			return true
		}
		i += n
	}
	return false
}

// appendU appends r as JSON's \uXXXX, a surrogate pair above U+FFFF.
func appendU(out []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		out = appendU(out, 0xd800+(r>>10))
		return appendU(out, 0xdc00+(r&0x3ff))
	}
	return append(out, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
