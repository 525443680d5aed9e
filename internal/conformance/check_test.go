package conformance

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReply(t *testing.T) {
	ids := func(d []Difference) []string {
		var s []string
		for _, x := range d {
			s = append(s, x.ID)
		}
		slices.Sort(s)
		return s
	}
	for _, tt := range []struct {
		name, req, typ, payload string
		want                    []string
	}{
		{"upstream's own reply", "FILE_READ", "FILE_CONTENTS", `{"content":"x","encoding":"utf-8","size_bytes":1,"truncated":false}`, nil},
		{"an added field", "EXECUTE_COMMAND", "COMMAND_RESULT",
			`{"stdout":"","stderr":"","exit_code":0,"timed_out":false,"duration_seconds":0,"capture_id":"c"}`, []string{"EXECUTE_COMMAND:COMMAND_RESULT.capture_id"}},
		{"a missing field", "FILE_READ", "FILE_CONTENTS", `{"content":"x","encoding":"utf-8"}`, []string{"FILE_READ:FILE_CONTENTS.missing.size_bytes"}},
		{"a nested field", "FILE_LIST", "FILE_LIST_RESPONSE",
			`{"entries":[{"name":"a","path":"/a","is_file":true,"is_dir":false,"is_symlink":false,"x":1}]}`, []string{"FILE_LIST:FILE_LIST_RESPONSE.entries[].x"}},
		{"unsolicited", "", "STATUS", `{"in_flight":0,"max_concurrent":4,"extra":1}`, []string{"STATUS.extra"}},
		{"an unknown code", "FILE_READ", "ERROR", `{"code":"APPROVAL_PENDING","message":"m"}`, []string{"ERROR.APPROVAL_PENDING"}},
		{"a known code", "FILE_READ", "ERROR", `{"code":"PERMISSION_PENDING","message":"m","details":{"approval_id":"a"}}`, nil},
		{"another reply type", "FILE_WRITE", "FILE_CONTENTS", `{"content":"","encoding":"utf-8","size_bytes":0}`, []string{"FILE_WRITE→FILE_CONTENTS"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(Reply(tt.req, tt.typ, []byte(tt.payload))); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTableParses: hostlink's PROTOCOL.md has the table, every row well
// formed.
func TestTableParses(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "PROTOCOL.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParseTable(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("the table is empty")
	}
}

func TestParseTableRefuses(t *testing.T) {
	for _, md := range []string{
		"## Differences from upstream\n\nno table\n",
		"## Differences from upstream\n\n| id | m | u | h | why |\n|---|---|---|---|---|\n| x | m | u | h | w |\n",
		"## Differences from upstream\n\n| id | m | u | h | why |\n|---|---|---|---|---|\n| `x` | m | u | h |  |\n",
		"## Differences from upstream\n\n| id | m | u | h | why |\n|---|---|---|---|---|\n| `x` | m | u | h | w |\n| `x` | m | u | h | w |\n",
	} {
		if _, err := ParseTable([]byte(md)); err == nil {
			t.Errorf("accepted %q", md)
		}
	}
}
