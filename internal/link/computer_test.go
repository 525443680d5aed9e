package link

import (
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

func TestWindowTable(t *testing.T) {
	var w windowTable
	w.add(1, []string{"win_a"})
	w.add(1, []string{"win_b"})
	if !w.has(1, "win_a") || !w.has(1, "win_b") || w.has(1, "win_c") {
		t.Error("ids of this connection")
	}
	if w.has(2, "win_a") {
		t.Error("an id outlived its connection")
	}
	w.add(2, []string{"win_c"})
	if w.has(2, "win_a") || !w.has(2, "win_c") || w.has(1, "win_c") {
		t.Error("a new connection kept the old ids")
	}
}

func TestComputerFeatures(t *testing.T) {
	for _, clip := range []bool{false, true} {
		reg := ops.New(ops.Options{Audit: nil})
		svc := desktop.New(desktop.Options{Clipboard: desktop.ClipboardPolicy{Enabled: clip}})
		desktop.Register(reg, svc)
		d := &dataChannel{rt: &Runtime{Registry: reg, Computer: true, Supports: svc.Supports}}
		fine, coarse := d.features()
		wantClip := clip && svc.Supports("computer_clipboard_read")
		if slices.Contains(fine, "app.launch") != svc.Supports("computer_launch_app") {
			t.Errorf("app.launch %v, but the desktop supports launching: %v", fine, svc.Supports("computer_launch_app"))
		}
		if slices.Contains(fine, "clipboard.read") != wantClip || slices.Contains(coarse, "clipboard") != wantClip {
			t.Errorf("clipboard %v: features %v %v", clip, fine, coarse)
		}
		for _, f := range []string{"window.list", "window.focus", "screenshot.window", "input.key.hold", "input.mouse.down_up", "permissions.check"} {
			if !slices.Contains(fine, f) {
				t.Errorf("features lack %s: %v", f, fine)
			}
		}
		svc.Close()
	}
	d := &dataChannel{rt: &Runtime{Registry: ops.New(ops.Options{Audit: nil})}}
	if fine, coarse := d.features(); fine != nil || coarse != nil {
		t.Errorf("features without computer use: %v %v", fine, coarse)
	}
}

func TestClipboardOff(t *testing.T) {
	err := clipboardOff(errcode.New(errcode.UnknownOperation, "no such operation"))
	if errcode.CodeOf(err) != errcode.FeatureNotSupported {
		t.Errorf("missing clipboard operation: %v", err)
	}
	if err := clipboardOff(errcode.New(errcode.ClipboardConcealed, "x")); errcode.CodeOf(err) != errcode.ClipboardConcealed {
		t.Errorf("other errors pass: %v", err)
	}
}
