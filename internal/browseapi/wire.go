package browseapi

import (
	"bytes"
	"encoding/json"

	"github.com/hostlink/hostlink/internal/errcode"
)

// ListRequest is DIRECTORY_LIST_REQUEST's payload. BrowseID and
// DirectoryRef are both nil to start a browse, or both set to navigate;
// Cursor, with both set, asks for the page after the one that returned it.
type ListRequest struct {
	BrowseID     *string `json:"browse_id"`
	DirectoryRef *string `json:"directory_ref"`
	Cursor       *string `json:"cursor,omitempty"`
}

// Entry is one directory in a listing (and the listing's current directory).
type Entry struct {
	DirectoryRef string `json:"directory_ref"`
	Name         string `json:"name"`
	Path         string `json:"path"`
}

// ListResponse is DIRECTORY_LIST_RESPONSE's payload. Current and ParentRef
// are null when listing the virtual roots (and ParentRef for a root's own
// listing). Entries is never null. Truncated is true only when the scan
// bound hid entries; NextCursor is set when another page exists. ExpiresAt
// is the browse's expiry in Unix seconds.
type ListResponse struct {
	BrowseID   string  `json:"browse_id"`
	Current    *Entry  `json:"current"`
	ParentRef  *string `json:"parent_ref"`
	Entries    []Entry `json:"entries"`
	NextCursor *string `json:"next_cursor"`
	Truncated  bool    `json:"truncated"`
	ExpiresAt  float64 `json:"expires_at"`
}

// MaxTokenLen bounds a browse id, reference or cursor on the wire; the host
// mints far shorter ones (see newToken).
const MaxTokenLen = 128

// DecodeListRequest decodes a DIRECTORY_LIST_REQUEST payload and checks its
// shape: browse_id and directory_ref both null or both set, a cursor only
// with them, every value a non-empty string of at most MaxTokenLen bytes.
// A payload that is not a JSON object or has wrongly typed fields is
// INVALID_ARGUMENT; a malformed reference pair is
// DIRECTORY_REFERENCE_INVALID. Unknown fields are ignored (forward-
// compatible additions within protocol major 1).
func DecodeListRequest(data []byte) (ListRequest, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return ListRequest{}, errcode.New(errcode.InvalidArgument, "payload must be a JSON object")
	}
	var r ListRequest
	if err := json.Unmarshal(data, &r); err != nil {
		return ListRequest{}, errcode.New(errcode.InvalidArgument, "payload does not match DIRECTORY_LIST_REQUEST")
	}
	if err := r.Check(); err != nil {
		return ListRequest{}, err
	}
	return r, nil
}

// Check validates the reference fields' shape (not their meaning).
func (r ListRequest) Check() error {
	if (r.BrowseID == nil) != (r.DirectoryRef == nil) {
		return refInvalid("browse_id and directory_ref must both be null or both be set")
	}
	if r.Cursor != nil && r.BrowseID == nil {
		return refInvalid("a cursor needs a browse_id and directory_ref")
	}
	for _, v := range []*string{r.BrowseID, r.DirectoryRef, r.Cursor} {
		if v != nil && (*v == "" || len(*v) > MaxTokenLen) {
			return refInvalid("a browse id, reference or cursor is malformed")
		}
	}
	return nil
}
