package textsafe

import "unicode/utf8"

// AppendJSONString appends s as a JSON string: quoted, and escaped as
// AppendJSONEscaped does.
func AppendJSONString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	return append(AppendJSONEscaped(dst, s), '"')
}

// AppendJSONEscaped appends s escaped for the inside of a JSON string
// (without the quotes), byte for byte as encoding/json writes a string with
// HTML escaping off: '"', '\' and control characters escaped (\b, \f, \n,
// \r and \t short), U+2028 and U+2029 escaped (JavaScript reads them as
// line ends), and each byte that is not UTF-8 written as \ufffd.
//
// It is for results too large to encode through encoding/json, which
// grows its buffer by doubling and copies the string several times: dst
// is written once, and nothing is allocated when it has room. A long s
// may be escaped a piece at a time, cut anywhere but inside a character
// (before a byte for which utf8.RuneStart is true): the pieces' escapes
// join into the whole's.
func AppendJSONEscaped[S ~string | ~[]byte](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf {
			e := jsonEscapes[c]
			if e == 0 {
				continue
			}
			dst = append(dst, s[start:i]...)
			if e == 'u' {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				dst = append(dst, '\\', e)
			}
			start = i + 1
			continue
		}
		// A string's conversion is free; a []byte's of at most UTFMax
		// bytes that does not escape is made on the stack.
		r, n := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += n - 1
			continue
		}
		i += n - 1
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// jsonEscapes says how AppendJSONEscaped writes each ASCII byte: 0 as
// it is, 'u' as \u00XX, any other c as '\' and c.
var jsonEscapes = func() (t [utf8.RuneSelf]byte) {
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['"'], t['\\'] = '"', '\\'
	t['\b'], t['\f'], t['\n'], t['\r'], t['\t'] = 'b', 'f', 'n', 'r', 't'
	return t
}()
