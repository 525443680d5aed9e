package browse

import (
	"testing"

	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// FuzzDecodeListRequest feeds the decoder, and a Service, arbitrary
// payloads: nothing may panic, every failure carries a typed code, and a
// forged reference is never accepted.
func FuzzDecodeListRequest(f *testing.F) {
	for _, s := range []string{
		`{"browse_id":null,"directory_ref":null}`,
		`{"browse_id":"b","directory_ref":"r","cursor":"c"}`,
		`{"browse_id":"b","directory_ref":null}`,
		`{}`, `null`, `[]`, `{"browse_id":1}`, `{"cursor":"\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	s := New(Options{Roots: RootsFunc(func() []Candidate { return []Candidate{{Path: dir}} })})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := browseapi.DecodeListRequest(data)
		if err != nil {
			if c := errcode.CodeOf(err); c != errcode.InvalidArgument && c != browseapi.ReferenceInvalid {
				t.Fatalf("error %v has code %s", err, c)
			}
			return
		}
		if r.BrowseID == nil {
			return // a fresh browse; not worth its I/O per input
		}
		if _, err := s.List(r); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
			t.Fatalf("List(%s) with host-unknown references = %v, want %s", data, err, browseapi.ReferenceInvalid)
		}
	})
}
