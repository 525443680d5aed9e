package link_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/link"
)

// TestRefusalsAndBrowsesAreAudited: everything the link refuses before an
// operation runs, every reply replayed from the idempotency store and
// every directory browse of the control connection is in the audit log,
// with the operation or message type, the code and the peer.
func TestRefusalsAndBrowsesAreAudited(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "f.txt"), []byte("x"), 0o600)
	// A session connection (legacy binding) that is not granted shell,
	// with one request at a time, where writes ask (for up to 3 s).
	f := newFixtureConfig(t, devplatform.Config{Deny: []string{"shell"}, MaxConcurrent: 1},
		"[policy]\nfiles_write = \"ask\"\nwait_seconds = 3\nplatform_folders = \"allow\"\n", func(o *link.Options) {
			o.Session, o.LegacyRoot, o.Shell = "aud", root, true
		})
	data := f.peer(t, "aud", time.Time{})
	type want struct{ op, code, details string }
	var wants []want
	check := func(typ string, payload any, w want) {
		t.Helper()
		gotTyp, m := send(t, data, typ, payload)
		if (gotTyp == "ERROR") != (w.code != "OK") || gotTyp == "ERROR" && m["code"] != w.code {
			t.Fatalf("%s: %s %v, want %s", typ, gotTyp, m, w.code)
		}
		wants = append(wants, w)
	}
	check("GADGET_REQUEST", map[string]any{}, want{"GADGET_REQUEST", "FEATURE_NOT_SUPPORTED", "GADGET_REQUEST"})
	check("EXECUTE_COMMAND", map[string]any{"argv": []string{"true"}}, want{"run_command", "CAPABILITY_NOT_GRANTED", "EXECUTE_COMMAND"})
	check("OPERATION_CALL", map[string]any{"op": "no_such_op"}, want{"no_such_op", "UNKNOWN_OPERATION", ""})
	check("OPERATION_CALL", map[string]any{"op": "browse_directories"}, want{"browse_directories", "CAPABILITY_NOT_GRANTED", "OPERATION_CALL"})
	check("FILE_READ", map[string]any{"path": 3}, want{"read_file", "INVALID_MESSAGE", "FILE_READ"})
	// A first reply is recorded (an ERROR too); its re-send is answered
	// from the store, and recorded as a replay; the key on another
	// request is refused.
	del := map[string]any{"path": "../outside", "idempotency_key": "k1"}
	check("FILE_DELETE", del, want{"delete", "PATH_OUTSIDE_ALLOWED_ROOT", ""})
	check("FILE_DELETE", del, want{"delete", "PATH_OUTSIDE_ALLOWED_ROOT", "replayed"})
	del["path"] = "../elsewhere"
	check("FILE_DELETE", del, want{"delete", "IDEMPOTENCY_KEY_REUSED", "FILE_DELETE"})
	// A write waits for its approval, holding the one slot: the request
	// after it is refused by max_concurrent.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	held, err := data.Start(ctx, "FILE_WRITE", map[string]any{"path": "w.txt", "content": "x"})
	if err != nil {
		t.Fatal(err)
	}
	check("FILE_STAT", map[string]any{"path": "f.txt"}, want{"stat", "SHIM_OVERLOADED", "FILE_STAT"})
	if e, err := held.Await(ctx); err != nil || e.Type != "ERROR" {
		t.Fatalf("the held write: %v %v", err, e)
	}

	// The control connection: its browses, and a file request it does
	// not serve.
	g := newFixture(t, devplatform.Config{}, time.Minute)
	ctrl := g.peer(t, devplatform.ControlPeer, time.Time{})
	if typ, m := send(t, ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil}); typ != "DIRECTORY_LIST_RESPONSE" {
		t.Fatalf("browse: %s %v", typ, m)
	}
	if typ, m := send(t, ctrl, "FILE_READ", map[string]any{"path": "x"}); typ != "ERROR" || m["code"] != "CAPABILITY_NOT_GRANTED" {
		t.Fatalf("FILE_READ on the control connection: %s %v", typ, m)
	}

	records := func(d *fixture) []audit.Line {
		lines, err := audit.Tail(d.d.Dirs.Audit, 500)
		if err != nil {
			t.Fatal(err)
		}
		return lines
	}
	got := records(f)
	for _, w := range wants {
		found := false
		for _, l := range got {
			if l.Op != w.op || l.Code != w.code || l.Transport != audit.Link || l.Peer != "platform session aud" {
				continue
			}
			switch w.details {
			case "":
				found = true
			case "replayed":
				found = l.Details["idempotency"] == "replayed"
			default:
				found = l.Details["message_type"] == w.details
			}
			if found {
				break
			}
		}
		if !found {
			t.Errorf("no record of %s %s (%s)", w.op, w.code, w.details)
		}
	}
	var browsed, refused bool
	for _, l := range records(g) {
		browsed = browsed || (l.Op == "browse_directories" && l.Code == "OK" && l.Peer == "platform control connection")
		refused = refused || (l.Op == "FILE_READ" && l.Code == "CAPABILITY_NOT_GRANTED" && fmt.Sprint(l.Details["message_type"]) == "FILE_READ")
	}
	if !browsed || !refused {
		t.Errorf("control connection: browse audited %v, refusal audited %v", browsed, refused)
	}
}
