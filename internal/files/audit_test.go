package files

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// tail returns the last n audit records of e.
func tail(t *testing.T, e *env, n int) []audit.Line {
	t.Helper()
	lines, err := audit.Tail(filepath.Join(e.base, "audit"), n)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestAuditRecords(t *testing.T) {
	e := newEnv(t, testLimits, extraWorkdir{alias: "second", dir: "w2"})
	const (
		content  = "DISTINCTIVE-CONTENT-7f3a9e"
		binary   = "BINARY-MARKER-b64-41d2"
		newText  = "EDITED-MARKER-9c1d"
		query    = "QUERY-MARKER-55e0"
		contentN = int64(len(content))
	)
	e.write("w2/other.txt", "12345")
	calls := []struct {
		op        string
		args      map[string]any
		workdir   string
		paths     []string
		code      errcode.Code
		bytes     int64 // -1: don't check
		wantBytes bool  // bytes must be > 0
	}{
		{"write_file", map[string]any{"path": "notes/secret.txt", "content": content, "create_parents": true},
			"main", []string{"notes/secret.txt"}, "", contentN, true},
		{"read_file", map[string]any{"path": "notes/secret.txt"}, "main", []string{"notes/secret.txt"}, "", contentN, true},
		{"read_file", map[string]any{"path": "notes/secret.txt", "offset": 3, "length": 5}, "main", []string{"notes/secret.txt"}, "", 5, true},
		{"read_file", map[string]any{"path": filepath.Join(e.root, "notes", "secret.txt"), "encoding": "base64"},
			"main", []string{"notes/secret.txt"}, "", contentN, true},
		{"write_file", map[string]any{"path": "bin.dat", "content": base64.StdEncoding.EncodeToString([]byte(binary)), "encoding": "base64"},
			"main", []string{"bin.dat"}, "", int64(len(binary)), true},
		{"read_file", map[string]any{"path": "notes/missing.txt"}, "main", []string{"notes/missing.txt"}, errcode.PathNotFound, 0, false},
		{"edit_file", map[string]any{"path": "notes/secret.txt", "edits": edits("DISTINCTIVE", newText)},
			"main", []string{"notes/secret.txt"}, "", int64(len(newText) + len(content) - len("DISTINCTIVE")), true},
		{"edit_file", map[string]any{"path": "notes/secret.txt", "edits": edits("not there", newText)},
			"main", []string{"notes/secret.txt"}, errcode.Conflict, 0, false},
		{"search_text", map[string]any{"query": query}, "main", []string{"."}, "", -1, true},
		{"stat", map[string]any{"path": filepath.Join(e.root, "notes", "secret.txt")}, "main", []string{"notes/secret.txt"}, "", 0, false},
		{"list_directory", map[string]any{"path": "notes"}, "main", []string{"notes"}, "", 0, false},
		{"find_files", map[string]any{"pattern": "**/*.txt"}, "main", []string{"."}, "", 0, false},
		{"create_directory", map[string]any{"path": "made/here"}, "main", []string{"made/here"}, "", 0, false},
		{"move", map[string]any{"src": "notes/secret.txt", "dst": "made/here/s.txt"}, "main",
			[]string{"notes/secret.txt", "made/here/s.txt"}, "", 0, false},
		{"delete", map[string]any{"path": "made", "recursive": true}, "main", []string{"made"}, "", 0, false},
		{"read_file", map[string]any{"workdir": "second", "path": "other.txt"}, "second", []string{"other.txt"}, "", 5, true},
		{"read_file", map[string]any{"path": filepath.Join(e.base, "w2", "sub", "..", "other.txt")}, "second", []string{"other.txt"}, "", 5, true},
		// Refused attempts are recorded with what was attempted (finding 12
		// of issue #16), never with an absolute path outside the workdirs.
		{"read_file", map[string]any{"path": "../outside/x"}, "main", []string{"../outside/x"}, errcode.PathOutsideRoot, 0, false},
		{"read_file", map[string]any{"path": "../../../../../../../../etc/passwd"}, "main",
			[]string{"../../../../../../../../etc/passwd"}, errcode.PathOutsideRoot, 0, false},
		{"read_file", map[string]any{"path": filepath.Join(e.base, "outside", "x")}, "main", []string{"../outside/x"}, errcode.PathOutsideRoot, 0, false},
		{"read_file", map[string]any{"workdir": "second", "path": "a/../../x"}, "second", []string{"../x"}, errcode.PathOutsideRoot, 0, false},
		{"move", map[string]any{"src": "notes/secret.txt", "dst": "../stolen.txt"}, "main",
			[]string{"notes/secret.txt", "../stolen.txt"}, errcode.PathOutsideRoot, 0, false},
		{"read_file", map[string]any{"workdir": "nope", "path": "x"}, "nope", []string{"x"}, errcode.UnknownWorkdir, 0, false},
		// An unknown alias is recorded clipped to 64 bytes at a character
		// boundary (byte 64 is inside the 32nd "é"), the cut marked.
		{"read_file", map[string]any{"workdir": "a" + strings.Repeat("é", 40), "path": "x"}, "a" + strings.Repeat("é", 31) + "…",
			[]string{"x"}, errcode.UnknownWorkdir, 0, false},
		{"list_workdirs", map[string]any{}, "", nil, "", 0, false},
		{"no_such_op", map[string]any{}, "", nil, errcode.UnknownOperation, 0, false},
	}
	for _, c := range calls {
		_, code := e.call(c.op, c.args)
		if code != c.code {
			t.Fatalf("%s %v: code %q, want %q", c.op, c.args, code, c.code)
		}
	}
	lines := tail(t, e, 1000)
	if len(lines) != len(calls) {
		t.Fatalf("%d audit records for %d calls", len(lines), len(calls))
	}
	for i, c := range calls {
		l := lines[i]
		wantCode := "OK"
		if c.code != "" {
			wantCode = string(c.code)
		}
		if l.Op != c.op || l.Code != wantCode || l.Workdir != c.workdir {
			t.Errorf("record %d: op %q code %q workdir %q; want %q %q %q", i, l.Op, l.Code, l.Workdir, c.op, wantCode, c.workdir)
		}
		if !slices.Equal(l.Paths, c.paths) && !(len(l.Paths) == 0 && len(c.paths) == 0) {
			t.Errorf("record %d (%s): paths %q, want %q", i, c.op, l.Paths, c.paths)
		}
		if c.bytes >= 0 && l.Bytes != c.bytes && (c.bytes != 0 || l.Bytes != 0) {
			t.Errorf("record %d (%s): bytes %d, want %d", i, c.op, l.Bytes, c.bytes)
		}
		if c.wantBytes && l.Bytes <= 0 {
			t.Errorf("record %d (%s): bytes %d, want > 0", i, c.op, l.Bytes)
		}
		if outside := len(l.Paths) > 0 && strings.HasPrefix(l.Paths[len(l.Paths)-1], "../"); outside != (l.Details["path_outside"] == true) {
			t.Errorf("record %d (%s): paths %q with details %v", i, c.op, l.Paths, l.Details)
		}
		if l.Transport != audit.MCPStdio || l.Seq == 0 || l.MAC == "" {
			t.Errorf("record %d: transport %q seq %d mac %q", i, l.Transport, l.Seq, l.MAC)
		}
	}
	if rep, err := audit.Verify(filepath.Join(e.base, "audit"), "", e.key); err != nil || rep.Failure != nil || rep.Records != len(calls) {
		t.Errorf("verify: %v %v, %d records", err, rep.Failure, rep.Records)
	}

	// No content, query or replacement text reaches the log, in any form.
	var log strings.Builder
	entries, err := os.ReadDir(filepath.Join(e.base, "audit"))
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range entries {
		b, err := os.ReadFile(filepath.Join(e.base, "audit", de.Name()))
		if err == nil {
			log.Write(b)
		}
	}
	if log.Len() == 0 {
		t.Fatal("empty audit log")
	}
	for _, secret := range []string{content, "7f3a9e", binary, base64.StdEncoding.EncodeToString([]byte(binary)),
		base64.StdEncoding.EncodeToString([]byte(content)), newText, query, "12345", filepath.Join(e.base, "outside")} {
		if strings.Contains(log.String(), secret) {
			t.Errorf("the audit log contains %q", secret)
		}
	}
}
