package agenttest

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// LogFiles logs, if the test fails, the last lines of each file that
// pattern matches then: a runtime CLI's own log, which says where its
// time went when a test waited too long. Only lines that start a record
// (keep reports whether one does) are kept, the last 250 of each file,
// each cut to 300 bytes.
func LogFiles(t testing.TB, name, pattern string, keep func(line []byte) bool) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			var lines [][]byte
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if l := sc.Bytes(); keep(l) {
					lines = append(lines, bytes.Clone(l[:min(len(l), 300)]))
				}
			}
			lines = lines[max(len(lines)-250, 0):]
			t.Logf("%s log %s (end):\n%s", name, f, bytes.Join(lines, []byte("\n")))
		}
	})
}
