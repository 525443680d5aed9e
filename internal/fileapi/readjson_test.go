package fileapi

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestReadFileResultAppendJSON: AppendJSON writes exactly what
// encoding/json (HTML escaping off) writes, for awkward content and names.
func TestReadFileResultAppendJSON(t *testing.T) {
	texts := []string{"", "plain text\n", `quotes " and \ backslashes`, "ctl \x00\x01\b\f\n\r\t\x1f\x7f",
		"<html> & </script>", "é 日本 🙂 \u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82", `"content":""`,
		strings.Repeat("line of text\n", 10000)}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, rng.IntN(64))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		texts = append(texts, string(b))
	}
	for i, text := range texts {
		r := ReadFileResult{Workdir: texts[(i+1)%len(texts)], Path: texts[(i+2)%len(texts)], Content: text,
			Encoding: "utf-8", Offset: int64(i), Length: int64(len(text)), SizeBytes: 1 << 40, EOF: i%2 == 0,
			SHA256: "ab", Revision: "sha256:ab", Mtime: 1796115024.8370655 + float64(i)}
		var want bytes.Buffer
		e := json.NewEncoder(&want)
		e.SetEscapeHTML(false)
		if err := e.Encode(r); err != nil {
			t.Fatal(err)
		}
		got, err := r.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), bytes.TrimSuffix(want.Bytes(), []byte("\n"))...)) {
			t.Fatalf("text %d %.80q:\n got %.300s\nwant %.300s", i, text, got, want.Bytes())
		}
	}
}

// TestReadFileResultAppendText: the MCP text of a read is the result
// without its content as one JSON line, a newline, then the content
// exactly; the line decodes back to every other field.
func TestReadFileResultAppendText(t *testing.T) {
	for i, text := range []string{"", "plain\n", "two\nlines\r\n", `{"content":"x"}`, "é 日本 \u2028", strings.Repeat("x\n", 5000)} {
		r := ReadFileResult{Workdir: "w", Path: "p\n\"q", Content: text, Encoding: "utf-8", Offset: int64(i),
			Length: int64(len(text)), SizeBytes: 99, EOF: true, SHA256: "ab", Revision: "sha256:ab", Mtime: 1796115024.8370655}
		head, content, ok := strings.Cut(string(r.AppendText([]byte{})), "\n")
		if !ok || content != text {
			t.Fatalf("text %d: content %.80q", i, content)
		}
		var back ReadFileResult
		if err := json.Unmarshal([]byte(head), &back); err != nil {
			t.Fatal(err)
		}
		if back.Content != "" || strings.Contains(head, `"content"`) {
			t.Errorf("the head carries the content: %s", head)
		}
		back.Content = text
		if back != r {
			t.Errorf("head %s decodes to %+v, want %+v", head, back, r)
		}
	}
}
