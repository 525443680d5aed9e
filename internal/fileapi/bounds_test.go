package fileapi

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/opsapi"
)

func TestWriteBound(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	b := opsapi.Bounds{MaxContentBytes: 10}
	tests := []struct {
		name string
		args WriteFileArgs
		ok   bool
	}{
		{"text at the limit", WriteFileArgs{Content: strings.Repeat("é", 5)}, true},
		{"text past the limit", WriteFileArgs{Content: strings.Repeat("x", 11)}, false},
		// Every padding length: 10 bytes encode with "==", 9 with none, 8 with "=".
		{"base64 at the limit", WriteFileArgs{Content: b64(10), Encoding: "base64"}, true},
		{"base64 past the limit", WriteFileArgs{Content: b64(11), Encoding: "base64"}, false},
		{"base64 below, no padding", WriteFileArgs{Content: b64(9), Encoding: "base64"}, true},
		{"base64 below, one pad", WriteFileArgs{Content: b64(8), Encoding: "base64"}, true},
		{"base64 past, no padding", WriteFileArgs{Content: b64(12), Encoding: "base64"}, false},
		{"no bound", WriteFileArgs{Content: strings.Repeat("x", 11)}, true},
	}
	for _, tt := range tests {
		bb := b
		if tt.name == "no bound" {
			bb = opsapi.Bounds{}
		}
		err := tt.args.Bound(bb)
		if (err == nil) != tt.ok || (err != nil && errcode.CodeOf(err) != errcode.FileTooLarge) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestReadBound(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	b := opsapi.Bounds{MaxContentBytes: 10}
	// A whole-file read stops one byte past the bound.
	var whole ReadFileArgs
	if err := whole.Bound(b); err != nil || whole.Length == nil || *whole.Length != 11 {
		t.Fatalf("whole-file read: %v %v", err, whole.Length)
	}
	if r := (ReadFileArgs{Length: n(10)}); r.Bound(b) != nil || *r.Length != 10 {
		t.Error("a range at the limit")
	}
	if r := (ReadFileArgs{Length: n(11)}); errcode.CodeOf(r.Bound(b)) != errcode.FileTooLarge {
		t.Error("a range past the limit")
	}
	if r := (ReadFileArgs{}); r.Bound(opsapi.Bounds{}) != nil || r.Length != nil {
		t.Error("no bound changed the read")
	}
}
