package x11

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
)

// own makes xclip the clipboard's owner of text as target, until the test
// ends.
func own(t *testing.T, d *xvfbtest.Display, text, target string) {
	t.Helper()
	args := []string{"-quiet", "-i", "-selection", "clipboard"}
	if target != "" {
		args = append(args, "-t", target)
	}
	cmd := exec.Command("xclip", args...)
	cmd.Env = d.Env()
	cmd.Stdin = strings.NewReader(text)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// hostlink answers TARGETS too while it owns the clipboard: wait for
	// what only xclip offers.
	d.Eventually("xclip to own the clipboard", func() bool {
		if target != "" {
			out, _ := d.Output("xclip", "-o", "-selection", "clipboard", "-t", "TARGETS")
			return strings.Contains(out, target)
		}
		out, _ := d.Output("xclip", "-o", "-selection", "clipboard")
		return out == text
	})
}

func TestClipboard(t *testing.T) {
	d := xvfbtest.Start(t, 320, 240)
	xvfbtest.Need(t, "xclip")
	b := open(t, d)
	ctx := context.Background()

	if got, err := b.ReadClipboard(ctx, 100); err != nil || got != (native.ClipboardText{}) {
		t.Fatalf("empty clipboard: %+v %v", got, err)
	}
	text := "hostlink wrote ✓\nline two"
	if err := b.WriteClipboard(ctx, text); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"UTF8_STRING", "TEXT"} {
		if out := d.Run("xclip", "-o", "-selection", "clipboard", "-t", target); out != text {
			t.Errorf("xclip -t %s reads %q", target, out)
		}
	}
	if got, err := b.ReadClipboard(ctx, 100); err != nil || got.Text != text || !got.Ours {
		t.Errorf("read back: %+v %v", got, err)
	}
	if _, err := b.ReadClipboard(ctx, 5); !errors.Is(err, native.ErrTooLarge) {
		t.Errorf("read over the limit: %v", err)
	}

	own(t, d, "from another application", "")
	got, err := b.ReadClipboard(ctx, 100)
	if err != nil || got.Text != "from another application" || got.Ours {
		t.Errorf("foreign read: %+v %v", got, err)
	}
	if _, err := b.ReadClipboard(ctx, 5); !errors.Is(err, native.ErrTooLarge) {
		t.Errorf("foreign read over the limit: %v", err)
	}

	own(t, d, "hunter2", concealedTarget)
	if got, err := b.ReadClipboard(ctx, 100); err != nil || got.Concealed != concealedTarget || got.Text != "" {
		t.Errorf("password manager's content: %+v %v", got, err)
	}

	if err := b.WriteClipboard(ctx, strings.Repeat("x", 1<<20)); !errors.Is(err, native.ErrTooLarge) {
		t.Errorf("1 MiB write: %v", err)
	}
}
