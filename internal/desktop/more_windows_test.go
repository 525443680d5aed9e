package desktop

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// TestWin32MoreOperations runs the clipboard, permissions and launch
// operations on this Windows session (Wine's, in CI).
func TestWin32MoreOperations(t *testing.T) {
	key := make([]byte, audit.KeySize)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: t.TempDir(), Key: key, MachineID: "m", Version: "v"})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	reg := ops.New(log, nil)
	s := New(Options{Clipboard: ClipboardPolicy{Enabled: true}})
	defer s.Close()
	Register(reg, s)
	call := func(op string, args any) (any, *errcode.Error) {
		raw, _ := json.Marshal(args)
		out, err := reg.Call(context.Background(), ops.Caller{Transport: "test"}, op, raw, nil)
		if err != nil {
			return nil, errcode.As(err)
		}
		return out, nil
	}
	if _, err := call("computer_clipboard_write", ClipboardWriteArgs{Content: "from hostlink ✓"}); err != nil {
		t.Fatal(err)
	}
	out, e := call("computer_clipboard_read", ClipboardReadArgs{})
	if e != nil || out.(ClipboardContent).Content != "from hostlink ✓" {
		t.Fatalf("read back: %+v %v", out, e)
	}
	out, e = call("computer_permissions", PermissionsArgs{})
	if e != nil || out.(PermissionsResult).Permissions["screen_recording"] != NotApplicable {
		t.Errorf("permissions: %+v %v", out, e)
	}
	if _, err := call("computer_launch_app", LaunchArgs{AppID: "notepad"}); err == nil || err.Code != FeatureNotSupported {
		t.Errorf("launch on Windows: %v", err)
	}
	if _, err := call("computer_windows", WindowsArgs{}); err != nil {
		t.Errorf("windows: %v", err)
	}
}
