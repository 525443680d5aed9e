package desktop

import (
	"slices"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

func TestPlanLowLevel(t *testing.T) {
	o := retina()
	tests := []struct {
		name  string
		args  desktopapi.ActArgs
		steps []native.Step
		code  errcode.Code
	}{
		{"mouse_down", desktopapi.ActArgs{Action: "mouse_down", X: ip(10), Y: ip(20), Button: "right"}, []native.Step{
			{Kind: native.Move, X: 1105, Y: 60}, {Kind: native.ButtonDown, Button: native.Right},
		}, ""},
		{"mouse_up with ctrl", desktopapi.ActArgs{Action: "mouse_up", X: ip(0), Y: ip(0), Modifiers: []string{"ctrl"}}, []native.Step{
			{Kind: native.KeyDown, Key: "ctrl"}, {Kind: native.Move, X: 1100, Y: 50},
			{Kind: native.ButtonUp, Button: native.Left}, {Kind: native.KeyUp, Key: "ctrl"},
		}, ""},
		{"hold_key chord", desktopapi.ActArgs{Action: "hold_key", Keys: "shift+a", DurationMS: 1500}, []native.Step{
			{Kind: native.KeyDown, Key: "shift"}, {Kind: native.KeyDown, Key: "a"},
			{Kind: native.Pause, Delay: 1500 * time.Millisecond},
			{Kind: native.KeyUp, Key: "a"}, {Kind: native.KeyUp, Key: "shift"},
		}, ""},
		{"mouse_down without a point", desktopapi.ActArgs{Action: "mouse_down"}, nil, errcode.InvalidArgument},
		{"mouse_up off every monitor", desktopapi.ActArgs{Action: "mouse_up", X: ip(399), Y: ip(299)}, nil, InputOutOfBounds},
		{"mouse_down bad button", desktopapi.ActArgs{Action: "mouse_down", X: ip(1), Y: ip(1), Button: "fourth"}, nil, errcode.InvalidArgument},
		{"hold_key without duration", desktopapi.ActArgs{Action: "hold_key", Keys: "a"}, nil, errcode.InvalidArgument},
		{"hold_key too long", desktopapi.ActArgs{Action: "hold_key", Keys: "a", DurationMS: 5001}, nil, errcode.InvalidArgument},
		{"hold_key unknown key", desktopapi.ActArgs{Action: "hold_key", Keys: "warp", DurationMS: 10}, nil, KeyUnmapped},
		{"unknown action", desktopapi.ActArgs{Action: "teleport"}, nil, errcode.InvalidArgument},
	}
	for _, tt := range tests {
		steps, _, err := plan(tt.args, o)
		if code := errcode.CodeOf(err); code != tt.code {
			t.Errorf("%s: code %q (%v), want %q", tt.name, code, err, tt.code)
			continue
		}
		if !slices.Equal(steps, tt.steps) {
			t.Errorf("%s: steps %+v, want %+v", tt.name, steps, tt.steps)
		}
	}
}
