package fileapi

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/hostlink/hostlink/internal/textsafe"
)

// AppendJSON appends r's JSON encoding to b: the same bytes as
// encoding/json without HTML escaping, but with the content, which can be
// megabytes, escaped once into a buffer sized for it. (encoding/json grows
// its buffer by doubling and copies the string again, several times the
// content's size in allocations for a large read.) Transports that can use
// it check for the method.
func (r ReadFileResult) AppendJSON(b []byte) ([]byte, error) {
	content := r.Content
	r.Content = ""
	return appendJSONWith(b, r, "content", content)
}

// appendJSONWith appends v's JSON encoding (HTML escaping off) with the
// string field named key, which v holds empty, set to value: value is
// escaped once, straight into b.
func appendJSONWith(b []byte, v any, key, value string) ([]byte, error) {
	var head bytes.Buffer
	e := json.NewEncoder(&head)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	enc := bytes.TrimSuffix(head.Bytes(), []byte("\n"))
	// Every '"' inside a JSON string is escaped, so the first unescaped
	// `"key":""` is the key and its empty value.
	member := `"` + key + `":""`
	i := bytes.Index(enc, []byte(member))
	if i < 0 {
		return nil, &json.UnsupportedValueError{Str: "a result without " + key}
	}
	i += len(member) - 2
	b = slices.Grow(b, len(enc)+len(value)+len(value)/16+16)
	b = append(b, enc[:i]...)
	b = textsafe.AppendJSONString(b, value)
	return append(b, enc[i+2:]...), nil
}

// AppendText appends the result as MCP clients get it: the result without
// its content as one line of JSON, then the content exactly as read. Over
// MCP a read is this text alone, with no structured content (see
// TextOnly), so that the content, which can be megabytes, crosses the wire
// once, and a model reads the file's text rather than a JSON string of it.
func (r ReadFileResult) AppendText(b []byte) []byte {
	content := r.Content
	r.Content = ""
	head, _ := json.Marshal(readHead(r))
	b = slices.Grow(b, len(head)+1+len(content))
	b = append(append(b, head...), '\n')
	return append(b, content...)
}

// TextOnly marks ReadFileResult as sent to MCP clients as its text only.
func (ReadFileResult) TextOnly() {}

// readHead is ReadFileResult without its content.
type readHead struct {
	Workdir   string  `json:"workdir"`
	Path      string  `json:"path"`
	Content   string  `json:"-"`
	Encoding  string  `json:"encoding"`
	Offset    int64   `json:"offset"`
	Length    int64   `json:"length"`
	SizeBytes int64   `json:"size_bytes"`
	EOF       bool    `json:"eof"`
	SHA256    string  `json:"sha256"`
	Revision  string  `json:"revision"`
	Mtime     float64 `json:"mtime"`
}
