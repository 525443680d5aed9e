package desktop

import (
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// TestRenderElements: element bounds are written in the observation's
// image coordinates, and the text stops at the byte limit.
func TestRenderElements(t *testing.T) {
	f := frame{Origin: native.Rect{X: 100, Y: 50, W: 400, H: 300}, Scale: 2, W: 800, H: 600}
	els := []native.Element{
		{Depth: 0, Role: "window", Name: "Editor", Bounds: native.Rect{X: 100, Y: 50, W: 400, H: 300}},
		{Depth: 1, Role: "button", Name: "Save", Bounds: native.Rect{X: 110, Y: 60, W: 40, H: 12}},
		{Depth: 1, Role: "edit"},
	}
	want := "window: Editor @ 0,0 800x600\n  button: Save @ 20,20 80x24\n  edit\n"
	if got := renderElements(els, f, 1<<10); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, max := range []int{len(want), len(want) - 1, 5, 0} {
		got := renderElements(els, f, max)
		if len(got) > max || !strings.HasPrefix(want, got) || (max == len(want)) != (got == want) {
			t.Errorf("limit %d: %q", max, got)
		}
	}
}
