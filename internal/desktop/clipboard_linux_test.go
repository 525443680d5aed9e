package desktop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// clipEnv is env with a Service whose clipboard policy is p.
func clipEnv(t *testing.T, p ClipboardPolicy) *env {
	e := newEnv(t, 320, 240)
	e.auditDir = t.TempDir()
	e.reg = auditedRegistry(t, e.auditDir)
	e.s = New(Options{Clipboard: p, Open: openX11(e.d.Name, nil)})
	e.s.opts.now = func() time.Time { return e.now }
	t.Cleanup(func() { e.s.Close() })
	Register(e.reg, e.s)
	return e
}

func TestClipboardOffByDefault(t *testing.T) {
	r := ops.New(ops.Options{Audit: nil})
	Register(r, New(Options{}))
	for _, op := range []string{"computer_clipboard_read", "computer_clipboard_write"} {
		if _, ok := r.Lookup(op); ok {
			t.Errorf("%s is registered without the local opt-in", op)
		}
	}
	for _, op := range []string{"computer_windows", "computer_focus_window", "computer_apps", "computer_launch_app", "computer_permissions"} {
		if _, ok := r.Lookup(op); !ok {
			t.Errorf("%s is not registered", op)
		}
	}
}

func TestClipboardWriteback(t *testing.T) {
	e := clipEnv(t, ClipboardPolicy{Enabled: true, MaxBytes: 64})
	if _, err := e.call("computer_clipboard_write", desktopapi.ClipboardWriteArgs{Content: "mine"}); err != nil {
		t.Fatal(err)
	}
	out, err := e.call("computer_clipboard_read", desktopapi.ClipboardReadArgs{})
	if err != nil || out.(desktopapi.ClipboardContent).Content != "mine" {
		t.Fatalf("read back: %+v %v", out, err)
	}
	if _, err := e.callAs(audit.MCPHTTP, "computer_clipboard_read", desktopapi.ClipboardReadArgs{MaxBytes: 2}); err == nil || err.Code != errcode.FileTooLarge {
		t.Errorf("read over max_bytes: %v", err)
	}
	e.now = e.now.Add(writebackWindow + time.Second)
	_, err = e.call("computer_clipboard_read", desktopapi.ClipboardReadArgs{})
	if err == nil || err.Code != ClipboardConcealed || err.Details["reason"] != "writeback_only" {
		t.Errorf("read after 31 s: %v", err)
	}
	if _, err := e.call("computer_clipboard_write", desktopapi.ClipboardWriteArgs{Content: strings.Repeat("x", 65)}); err == nil || err.Code != errcode.FileTooLarge {
		t.Errorf("write over the limit: %v", err)
	}
	if _, err := e.call("computer_clipboard_write", desktopapi.ClipboardWriteArgs{Content: "x", Format: "image"}); err == nil || err.Code != errcode.InvalidArgument {
		t.Errorf("image write: %v", err)
	}
}

func TestClipboardReadForeign(t *testing.T) {
	e := clipEnv(t, ClipboardPolicy{Enabled: true, ReadForeign: true})
	cmd := exec.Command("xclip", "-quiet", "-i", "-selection", "clipboard")
	cmd.Env = e.d.Env()
	cmd.Stdin = strings.NewReader("the user copied this")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var out any
	e.d.Eventually("the foreign text", func() bool {
		var err *errcode.Error
		out, err = e.call("computer_clipboard_read", desktopapi.ClipboardReadArgs{})
		return err == nil && out.(desktopapi.ClipboardContent).Content == "the user copied this"
	})
	// The audit record has the size and a hash prefix, never the text.
	rec, _ := os.ReadFile(filepath.Join(e.auditDir, "audit.log"))
	if strings.Contains(string(rec), "the user copied this") || !strings.Contains(string(rec), "text_sha256_prefix") {
		t.Error("the clipboard text reached the audit log")
	}
}
