package browseapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestDecodeListRequest(t *testing.T) {
	long := strings.Repeat("x", MaxTokenLen+1)
	tests := []struct {
		in   string
		want string // re-encoded request
		code errcode.Code
	}{
		{`{"browse_id":null,"directory_ref":null}`, `{"browse_id":null,"directory_ref":null}`, ""},
		{`{}`, `{"browse_id":null,"directory_ref":null}`, ""},
		{`{"browse_id":"b","directory_ref":"r"}`, `{"browse_id":"b","directory_ref":"r"}`, ""},
		{`{"browse_id":"b","directory_ref":"r","cursor":"c"}`, `{"browse_id":"b","directory_ref":"r","cursor":"c"}`, ""},
		{`{"browse_id":"b","directory_ref":"r","cursor":null,"path":"/etc"}`, `{"browse_id":"b","directory_ref":"r"}`, ""},
		{`{"browse_id":"b","directory_ref":null}`, "", ReferenceInvalid},
		{`{"browse_id":null,"directory_ref":"r"}`, "", ReferenceInvalid},
		{`{"cursor":"c"}`, "", ReferenceInvalid},
		{`{"browse_id":"","directory_ref":"r"}`, "", ReferenceInvalid},
		{`{"browse_id":"b","directory_ref":"` + long + `"}`, "", ReferenceInvalid},
		{`{"browse_id":"b","directory_ref":"r","cursor":""}`, "", ReferenceInvalid},
		{`{"browse_id":1,"directory_ref":"r"}`, "", errcode.InvalidArgument},
		{`{"browse_id":["b"],"directory_ref":"r"}`, "", errcode.InvalidArgument},
		{`null`, "", errcode.InvalidArgument},
		{`"x"`, "", errcode.InvalidArgument},
		{``, "", errcode.InvalidArgument},
		{`{"browse_id":"b"`, "", errcode.InvalidArgument},
	}
	for _, tt := range tests {
		r, err := DecodeListRequest([]byte(tt.in))
		if errcode.CodeOf(err) != tt.code {
			t.Errorf("DecodeListRequest(%s) error %v, want code %q", tt.in, err, tt.code)
			continue
		}
		if tt.code == "" {
			if b, _ := json.Marshal(r); string(b) != tt.want {
				t.Errorf("DecodeListRequest(%s) = %s, want %s", tt.in, b, tt.want)
			}
		}
	}
}

func TestListResponseWireNames(t *testing.T) {
	b, _ := json.Marshal(ListResponse{BrowseID: "b", Entries: []Entry{{DirectoryRef: "r", Name: "Home", Path: "/home/a"}}, ExpiresAt: 1.5})
	want := `{"browse_id":"b","current":null,"parent_ref":null,"entries":[{"directory_ref":"r","name":"Home","path":"/home/a"}],"next_cursor":null,"truncated":false,"expires_at":1.5}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
