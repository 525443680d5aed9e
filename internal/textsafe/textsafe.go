// Package textsafe makes untrusted text safe to show to a person.
//
// Text that an agent, a platform, a file or a command chose reaches people
// through hostlink: approval prompts, the web console, desktop
// notifications, `hostlink status`, `hostlink audit tail`. A terminal or a
// browser acts on some characters instead of showing them: a carriage
// return or an ANSI sequence overwrites what came before it
// (`curl … | sh #\r\x1b[56C\x1b[Kmake test` shows as `make test`), a
// bidirectional override reorders it, and zero-width and other format
// characters hide text or make two different strings look the same. Every
// renderer passes untrusted text through this package, which shows each
// such character as a visible escape instead.
//
// What is escaped (see Hidden): C0 and C1 control characters and DEL;
// every character that is not graphic in Unicode's sense (categories Cc,
// Cf — bidirectional embeddings, overrides and isolates, zero-width
// characters, the soft hyphen, tag characters —, Co, Cn, Zl and Zp);
// spaces other than U+0020 (they look like a space but are not one to a
// shell); graphic characters that render as nothing (Hangul fillers,
// the braille blank, the combining grapheme joiner, variation selectors);
// and bytes that are not UTF-8. Emoji that rely on a zero-width joiner or
// a variation selector therefore show those as escapes: that is the price
// of never showing text that is not there.
//
// Escapes are written as Go writes them: \n, \r and \t, \xNN for other
// ASCII controls and for invalid bytes, \uNNNN and \UNNNNNNNN for other
// characters. A backslash in the text is left alone (Windows paths stay
// readable), so literal text that looks like an escape is possible; it is
// visible text either way, which is what matters here.
//
// The package also holds hostlink's one JSON string escaper
// (AppendJSONString), for the large results written without
// encoding/json: text bound for a JSON string passes through it.
package textsafe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s as one line: every hidden character, newlines and tabs
// included, is escaped.
func Line(s string) string { return escape(s, false) }

// Block returns s for multi-line display: newlines and tabs are kept, every
// other hidden character (carriage returns included) is escaped.
func Block(s string) string { return escape(s, true) }

// Hidden reports whether r is shown escaped (in a Block, '\n' and '\t'
// are kept although Hidden reports them).
func Hidden(r rune) bool {
	switch {
	case r == ' ':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x7f:
		return false
	case unicode.Is(unicode.Zs, r):
		return true // NBSP and friends: look like a space, are not one
	case !unicode.IsGraphic(r):
		return true // Cc, Cf, Co, Cn, Zl, Zp
	}
	return unicode.Is(invisible, r)
}

// invisible are graphic characters that render as nothing or alter the
// character before them without a visible mark.
var invisible = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x034f, Hi: 0x034f, Stride: 1}, // combining grapheme joiner
		{Lo: 0x115f, Hi: 0x1160, Stride: 1}, // Hangul choseong and jungseong fillers
		{Lo: 0x17b4, Hi: 0x17b5, Stride: 1}, // Khmer inherent vowels
		{Lo: 0x180b, Hi: 0x180f, Stride: 1}, // Mongolian variation selectors
		{Lo: 0x2800, Hi: 0x2800, Stride: 1}, // braille pattern blank
		{Lo: 0x3164, Hi: 0x3164, Stride: 1}, // Hangul filler
		{Lo: 0xfe00, Hi: 0xfe0f, Stride: 1}, // variation selectors
		{Lo: 0xffa0, Hi: 0xffa0, Stride: 1}, // halfwidth Hangul filler
	},
	R32: []unicode.Range32{
		{Lo: 0xe0100, Hi: 0xe01ef, Stride: 1}, // variation selectors supplement
	},
}

const hexDigits = "0123456789abcdef"

func escape(s string, block bool) string {
	// Most text needs nothing; return it without copying.
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (Hidden(r) && !(block && (r == '\n' || r == '\t'))) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case !Hidden(r) || (block && (r == '\n' || r == '\t')):
			b.WriteString(s[i : i+n])
		default:
			writeEscape(&b, r)
		}
		i += n
	}
	return b.String()
}

func writeEscape(b *strings.Builder, r rune) {
	switch {
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x80:
		writeHex(b, `\x`, uint32(r), 2)
	case r <= 0xffff:
		writeHex(b, `\u`, uint32(r), 4)
	default:
		writeHex(b, `\U`, uint32(r), 8)
	}
}

func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	b.WriteString(prefix)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[v>>shift&0xf])
	}
}

// Clip cuts s to at most n bytes at a character boundary and marks the
// cut with "…" (so the result may be up to n+3 bytes): a bound on text
// that must never split a character, such as an audit record's fields or
// a name quoted back in an error.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
