package desktop

import (
	"image"
	"testing"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/desktopapi"
)

func TestActMarksDrawn(t *testing.T) {
	x, y := 40, 30
	tests := []struct {
		name  string
		act   desktopapi.ActArgs
		kind  string
		marks [][2]int // pixels that must be marked
		clear [][2]int // and that must not
	}{
		{"click", desktopapi.ActArgs{Action: "click", X: &x, Y: &y}, "click", [][2]int{{52, 30}, {40, 30}, {28, 30}}, [][2]int{{70, 30}}},
		{"drag", desktopapi.ActArgs{Action: "drag", Path: [][2]int{{5, 5}, {60, 5}}}, "drag", [][2]int{{30, 5}, {72, 5}}, [][2]int{{30, 40}}},
		{"scroll", desktopapi.ActArgs{Action: "scroll", X: &x, Y: &y, DY: 240}, "scroll", [][2]int{{40, 45}, {40, 50}}, [][2]int{{40, 70}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marks := actMarks(tt.act)
			if len(marks) != 1 || marks[0].Kind != tt.kind {
				t.Fatalf("marks = %+v", marks)
			}
			img := image.NewRGBA(image.Rect(0, 0, 100, 80))
			for _, m := range marks {
				drawMark(img, m)
			}
			for _, p := range tt.marks {
				if img.RGBAAt(p[0], p[1]) != markColor {
					t.Errorf("%v is not marked", p)
				}
			}
			for _, p := range tt.clear {
				if img.RGBAAt(p[0], p[1]) == markColor {
					t.Errorf("%v is marked", p)
				}
			}
		})
	}
	if m := actMarks(desktopapi.ActArgs{Action: "type", Text: "x"}); m != nil {
		t.Errorf("typing marks %v", m)
	}
	// A mark past the image's edge is clipped, not a panic.
	drawMark(image.NewRGBA(image.Rect(0, 0, 4, 4)), approvals.Mark{Kind: "click", Points: [][2]int{{100, 100}}})
}
