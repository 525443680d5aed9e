package fileapi

import (
	"encoding/base64"
	"strings"

	"github.com/hostlink/hostlink/internal/opsapi"
)

// Bound limits a read to the connection's content bound: a range asking
// for more is refused before the file is opened, and a whole-file read
// stops one byte past the bound, enough for the registry to tell it is
// too large (ReadFileResult.ContentBytes).
func (a *ReadFileArgs) Bound(b opsapi.Bounds) error {
	if b.MaxContentBytes <= 0 {
		return nil
	}
	if a.Length != nil {
		if *a.Length > b.MaxContentBytes {
			return opsapi.ContentTooLarge(*a.Length, b.MaxContentBytes)
		}
		return nil
	}
	n := b.MaxContentBytes + 1
	a.Length = &n
	return nil
}

// ContentBytes is the number of bytes read.
func (r ReadFileResult) ContentBytes() int64 { return r.Length }

// Bound refuses content larger than the connection's bound before the
// write is judged or done.
func (a *WriteFileArgs) Bound(b opsapi.Bounds) error {
	if b.MaxContentBytes <= 0 {
		return nil
	}
	if n := decodedSize(a.Content, a.Encoding); n > b.MaxContentBytes {
		return opsapi.ContentTooLarge(n, b.MaxContentBytes)
	}
	return nil
}

// decodedSize is the number of bytes content stands for in encoding,
// without decoding it (invalid base64 is refused later, by the write).
func decodedSize(content, encoding string) int64 {
	if encoding != "base64" {
		return int64(len(content))
	}
	trimmed := strings.TrimRight(content, "=")
	return int64(base64.RawStdEncoding.DecodedLen(len(trimmed)))
}
