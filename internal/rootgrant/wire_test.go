package rootgrant

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestValidSessionID(t *testing.T) {
	for _, id := range []string{"a", "3f1c2a9e-7b1d-4c55-9d1e-0a6f2b8c9d10", "chat_1.2~x", strings.Repeat("x", MaxSessionIDLen)} {
		if err := ValidSessionID(id); err != nil {
			t.Errorf("ValidSessionID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", strings.Repeat("x", MaxSessionIDLen+1), "a/b", "..%2f", "a b", "é", "a\x00", "a?b", `a\b`} {
		if errcode.CodeOf(ValidSessionID(id)) != errcode.InvalidArgument {
			t.Errorf("ValidSessionID(%q) accepted", id)
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		dec  func([]byte) (any, error)
		in   string
		want any
		code errcode.Code
	}{
		{"attach", decAttach, `{"session_id":"s1","browse_id":"b","directory_ref":"r","expected_connection_id":null}`,
			AttachRequest{SessionID: "s1", BrowseID: "b", DirectoryRef: "r"}, ""},
		{"attach with connection id and extra field", decAttach, `{"session_id":"s1","browse_id":"b","directory_ref":"r","expected_connection_id":"c","future":1}`,
			AttachRequest{SessionID: "s1", BrowseID: "b", DirectoryRef: "r", ExpectedConnectionID: ptr("c")}, ""},
		{"attach without session", decAttach, `{"browse_id":"b","directory_ref":"r"}`, nil, errcode.InvalidArgument},
		{"attach long connection id", decAttach, `{"session_id":"s","expected_connection_id":"` + strings.Repeat("c", MaxOpaqueLen+1) + `"}`, nil, errcode.InvalidArgument},
		{"attach wrong type", decAttach, `{"session_id":1}`, nil, errcode.InvalidArgument},
		{"attach array", decAttach, `[]`, nil, errcode.InvalidArgument},
		{"attach null", decAttach, `null`, nil, errcode.InvalidArgument},
		{"attach empty", decAttach, ``, nil, errcode.InvalidArgument},
		{"attach truncated", decAttach, `{"session_id":"s"`, nil, errcode.InvalidArgument},
		{"activate", decActivate, `{"session_id":"s","revision":2}`, ActivateRequest{SessionID: "s", Revision: 2}, ""},
		{"activate zero revision", decActivate, `{"session_id":"s","revision":0}`, nil, errcode.InvalidArgument},
		{"activate no revision", decActivate, `{"session_id":"s"}`, nil, errcode.InvalidArgument},
		{"activate fractional revision", decActivate, `{"session_id":"s","revision":1.5}`, nil, errcode.InvalidArgument},
		{"activate huge revision", decActivate, `{"session_id":"s","revision":1e30}`, nil, errcode.InvalidArgument},
		{"restore", decRestore, `{"session_id":"s","root_grant":"v1.a.b"}`, RestoreRequest{SessionID: "s", RootGrant: "v1.a.b"}, ""},
		{"restore no grant", decRestore, `{"session_id":"s"}`, nil, GrantInvalid},
		{"restore grant null", decRestore, `{"session_id":"s","root_grant":null}`, nil, GrantInvalid},
		{"restore bad session", decRestore, `{"session_id":"../x","root_grant":"g"}`, nil, errcode.InvalidArgument},
		{"detach", decDetach, ` {"session_id":"s"} `, DetachRequest{SessionID: "s"}, ""},
		{"detach no session", decDetach, `{}`, nil, errcode.InvalidArgument},
	}
	for _, tt := range tests {
		got, err := tt.dec([]byte(tt.in))
		if errcode.CodeOf(err) != tt.code {
			t.Errorf("%s: error %v, want code %q", tt.name, err, tt.code)
			continue
		}
		if tt.code == "" {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if string(gj) != string(wj) {
				t.Errorf("%s: got %s, want %s", tt.name, gj, wj)
			}
		}
	}
}

func TestAttachedWireNames(t *testing.T) {
	b, _ := json.Marshal(Attached{SessionID: "s", AllowedRoot: "/r", Fingerprint: "f", Revision: 1, RootGrant: "g"})
	want := `{"session_id":"s","allowed_root":"/r","fingerprint":"f","revision":1,"root_grant":"g"}`
	if string(b) != want {
		t.Errorf("SESSION_ATTACHED = %s, want %s", b, want)
	}
	b, _ = json.Marshal(Activated{SessionID: "s", AllowedRoot: "/r", Fingerprint: "f", Revision: 1})
	want = `{"session_id":"s","allowed_root":"/r","fingerprint":"f","revision":1}`
	if string(b) != want {
		t.Errorf("SESSION_ACTIVATED = %s, want %s", b, want)
	}
}

func ptr[T any](v T) *T { return &v }

func decAttach(b []byte) (any, error)   { return DecodeAttach(b) }
func decActivate(b []byte) (any, error) { return DecodeActivate(b) }
func decRestore(b []byte) (any, error)  { return DecodeRestore(b) }
func decDetach(b []byte) (any, error)   { return DecodeDetach(b) }
