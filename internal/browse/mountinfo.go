package browse

import (
	"bufio"
	"bytes"
	"strings"
)

// mount is one line of a Linux mountinfo table.
type mount struct {
	Point  string // mount point, unescaped
	FSType string
	Source string
}

// parseMountInfo parses /proc/<pid>/mountinfo (proc(5)):
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//
// Fields 5 (mount point) and, after the "-" separator, the file system type
// and source are kept. The kernel escapes space, tab, newline and backslash
// in paths as \ooo octal. Malformed lines are skipped.
func parseMountInfo(data []byte) []mount {
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(f) {
			continue
		}
		m := mount{Point: unescapeOctal(f[4]), FSType: f[sep+1]}
		if sep+2 < len(f) {
			m.Source = unescapeOctal(f[sep+2])
		}
		if !strings.HasPrefix(m.Point, "/") {
			continue
		}
		out = append(out, m)
	}
	return out
}

// unescapeOctal undoes the kernel's \ooo escapes.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && '0' <= s[i+1] && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }
