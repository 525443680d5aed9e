package files

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestHashFile(t *testing.T) {
	e := newEnv(t, testLimits)
	content := strings.Repeat("hash me\n", 1000)
	e.write("root/d/f.txt", content)
	sum := sha256.Sum256([]byte(content))
	got := e.ok("hash_file", map[string]any{"path": "d/f.txt"})
	if got["sha256"] != hex.EncodeToString(sum[:]) || got["size_bytes"] != float64(len(content)) || got["path"] != "d/f.txt" {
		t.Fatalf("hash_file: %v", got)
	}
	// The revision is read_file's, so that it can guard a write.
	if read := e.ok("read_file", map[string]any{"path": "d/f.txt"}); got["revision"] != read["revision"] {
		t.Errorf("revision %v, read_file's %v", got["revision"], read["revision"])
	}
	e.ok("write_file", map[string]any{"path": "d/f.txt", "content": "new", "if_revision": got["revision"]})
	big := strings.Repeat("x", int(testLimits.MaxSearchFileBytes)+1)
	e.write("root/big.bin", big)
	for _, tt := range []struct {
		path string
		code errcode.Code
	}{
		{"big.bin", errcode.FileTooLarge},
		{"missing.txt", errcode.PathNotFound},
		{"d", errcode.NotAFile},
		{"../outside/x", errcode.PathOutsideRoot},
	} {
		if _, code := e.call("hash_file", map[string]any{"path": tt.path}); code != tt.code {
			t.Errorf("hash_file %s: %q, want %q", tt.path, code, tt.code)
		}
	}
}
