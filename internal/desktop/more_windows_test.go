package desktop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows/registry"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestWin32MoreOperations runs the clipboard, permissions and launch
// operations on this Windows session (Wine's, in CI).
func TestWin32MoreOperations(t *testing.T) {
	reg := auditedRegistry(t, t.TempDir())
	s := New(Options{Clipboard: ClipboardPolicy{Enabled: true}})
	defer s.Close()
	Register(reg, s)
	call := func(op string, args any) (any, *errcode.Error) {
		return callOp(context.Background(), reg, audit.MCPStdio, op, args)
	}
	if _, err := call("computer_clipboard_write", desktopapi.ClipboardWriteArgs{Content: "from hostlink ✓"}); err != nil {
		t.Fatal(err)
	}
	out, e := call("computer_clipboard_read", desktopapi.ClipboardReadArgs{})
	if e != nil || out.(desktopapi.ClipboardContent).Content != "from hostlink ✓" {
		t.Fatalf("read back: %+v %v", out, e)
	}
	out, e = call("computer_permissions", desktopapi.PermissionsArgs{})
	if e != nil || out.(desktopapi.PermissionsResult).Permissions["screen_recording"] != desktopapi.NotApplicable {
		t.Errorf("permissions: %+v %v", out, e)
	}

	// An application registered under App Paths (here cmd.exe, under a
	// test name) is listed and launched as its program with the args.
	k, _, err := registry.CreateKey(registry.CURRENT_USER, appPathsKey+`\hostlink-test.exe`, registry.SET_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	comspec := os.Getenv("ComSpec")
	k.SetStringValue("", `"`+comspec+`"`)
	k.Close()
	defer registry.DeleteKey(registry.CURRENT_USER, appPathsKey+`\hostlink-test.exe`)
	out, e = call("computer_apps", desktopapi.AppsArgs{Installed: true})
	found := false
	for _, a := range out.(desktopapi.AppsResult).Installed {
		found = found || (a.AppID == "hostlink-test.exe" && strings.EqualFold(a.Executable, comspec))
	}
	if e != nil || !found {
		t.Fatalf("installed apps lack the registration: %+v %v", out, e)
	}
	made := filepath.Join(t.TempDir(), "made")
	out, e = call("computer_launch_app", desktopapi.LaunchArgs{AppID: "HOSTLINK-TEST.EXE", Args: []string{"/c", "mkdir", made}})
	if e != nil || out.(desktopapi.LaunchResult).PID <= 0 {
		t.Fatalf("launch: %+v %v", out, e)
	}
	tstest.WaitFor(t, 20*time.Second, "the launched program to run", func() bool {
		_, err := os.Stat(made)
		return err == nil
	})
	self, _ := os.Executable()
	if _, e := call("computer_launch_app", desktopapi.LaunchArgs{ExecutablePath: self}); e == nil || e.Code != AppNotFound {
		t.Errorf("launching a program of no registration: %v", e)
	}
	if _, err := call("computer_windows", desktopapi.WindowsArgs{}); err != nil {
		t.Errorf("windows: %v", err)
	}
}
