package devplatform

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/link/wire"
)

// listing is the part of DIRECTORY_LIST_RESPONSE the folder walk reads.
type listing struct {
	BrowseID string `json:"browse_id"`
	Entries  []struct {
		Ref  string `json:"directory_ref"`
		Name string `json:"name"`
		Path string `json:"path"`
	} `json:"entries"`
	NextCursor *string `json:"next_cursor"`
}

// Attached is what Attach did: the executor's SESSION_ATTACHED and
// SESSION_ACTIVATED payloads.
type Attached struct {
	Attached  json.RawMessage `json:"attached"`
	Activated json.RawMessage `json:"activated"`
}

// Attach plays a platform's folder picker: it browses the executor's
// folders from the virtual roots down to dir (an absolute path the
// executor can list), attaches it to session, activates the session and
// waits for its data connection.
func (s *Server) Attach(ctx context.Context, session, dir string) (*Attached, error) {
	ctrl := s.Peer(ControlPeer)
	if ctrl == nil {
		return nil, fmt.Errorf("no executor is connected")
	}
	dir = filepath.Clean(dir)
	var l listing
	if err := request(ctx, ctrl, wire.TypeDirectoryListRequest, map[string]any{"browse_id": nil, "directory_ref": nil}, wire.TypeDirectoryListResponse, &l); err != nil {
		return nil, err
	}
	browse := l.BrowseID
	ref, at := "", ""
	for {
		next, nextPath := "", ""
		for _, e := range l.Entries {
			if within(dir, e.Path) && len(e.Path) > len(nextPath) {
				next, nextPath = e.Ref, e.Path
			}
		}
		if next == "" && l.NextCursor != nil && ref != "" {
			if err := request(ctx, ctrl, wire.TypeDirectoryListRequest, map[string]any{"browse_id": browse, "directory_ref": ref, "cursor": *l.NextCursor},
				wire.TypeDirectoryListResponse, &l); err != nil {
				return nil, err
			}
			continue
		}
		if next == "" {
			return nil, fmt.Errorf("%s is not reachable from %s by browsing", dir, orRoots(at))
		}
		ref, at = next, nextPath
		if filepath.Clean(at) == dir {
			break
		}
		if err := request(ctx, ctrl, wire.TypeDirectoryListRequest, map[string]any{"browse_id": browse, "directory_ref": ref}, wire.TypeDirectoryListResponse, &l); err != nil {
			return nil, err
		}
	}
	var out Attached
	var att struct {
		Revision int64 `json:"revision"`
	}
	if err := request(ctx, ctrl, wire.TypeAttachSession, map[string]any{"session_id": session, "browse_id": browse, "directory_ref": ref}, wire.TypeSessionAttached, &out.Attached); err != nil {
		return nil, err
	}
	json.Unmarshal(out.Attached, &att)
	since := time.Now()
	if err := request(ctx, ctrl, wire.TypeActivateSession, map[string]any{"session_id": session, "revision": att.Revision}, wire.TypeSessionActivated, &out.Activated); err != nil {
		return nil, err
	}
	if _, err := s.WaitPeer(ctx, session, since); err != nil {
		return nil, err
	}
	return &out, nil
}

func orRoots(at string) string {
	if at == "" {
		return "the virtual roots"
	}
	return at
}

// within reports whether dir is p or below it.
func within(dir, p string) bool {
	p = filepath.Clean(p)
	if dir == p {
		return true
	}
	if !strings.HasSuffix(p, string(filepath.Separator)) {
		p += string(filepath.Separator)
	}
	return strings.HasPrefix(dir, p)
}

// request sends a request and decodes a reply of type want into out; an
// ERROR reply becomes an error naming its code.
func request(ctx context.Context, p *Peer, typ string, payload any, want string, out any) error {
	e, err := p.Request(ctx, typ, "", payload)
	if err != nil {
		return err
	}
	if e.Type != want {
		var ep wire.ErrorPayload
		json.Unmarshal(e.Payload, &ep)
		return fmt.Errorf("%s: %s %s: %s", typ, e.Type, ep.Code, ep.Message)
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], e.Payload...)
		return nil
	}
	return json.Unmarshal(e.Payload, out)
}
