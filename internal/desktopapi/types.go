package desktopapi

import (
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/opsapi"
)

// DesktopsArgs is computer_desktops' request.
type DesktopsArgs struct {
	Windows bool `json:"windows,omitempty" jsonschema:"also list each desktop's top-level windows"`
}

// DesktopsResult is computer_desktops' response.
type DesktopsResult struct {
	Desktops []Desktop `json:"desktops"`
	// Reason says why no desktop is listed.
	Reason *native.Readiness `json:"unavailable,omitempty"`
}

// Desktop is one reachable desktop. Without an image, its geometry is in
// the native coordinate space that CoordinateSpace names.
type Desktop struct {
	ID              string           `json:"id"`
	CoordinateSpace string           `json:"coordinate_space" jsonschema:"native space of the bounds below: pixels or points"`
	Monitors        []native.Monitor `json:"monitors"`
	Windows         []WindowInfo     `json:"windows,omitempty"`
	// Operations says, per operation, whether it can run now.
	Operations map[string]native.Readiness `json:"operations"`
}

// WindowInfo is a window as a caller sees it.
type WindowInfo struct {
	Ref       string      `json:"window_ref,omitempty" jsonschema:"names the window in computer_act focus; valid with its observation"`
	Title     string      `json:"title"`
	App       string      `json:"app,omitempty"`
	PID       int         `json:"pid,omitempty"`
	Bounds    native.Rect `json:"bounds"`
	Focused   bool        `json:"focused,omitempty"`
	Minimized bool        `json:"minimized,omitempty"`
	Elevated  bool        `json:"elevated,omitempty" jsonschema:"input cannot reach this window (UAC-elevated)"`
}

// Region selects part of an earlier observation's image.
type Region struct {
	ObservationID string `json:"observation_id"`
	X             int    `json:"x" min:"0" max:"1048576" jsonschema:"left, in that observation's image pixels"`
	Y             int    `json:"y" min:"0" max:"1048576"`
	W             int    `json:"w" min:"1" max:"1048576"`
	H             int    `json:"h" min:"1" max:"1048576"`
}

// ObserveArgs is computer_observe's request.
type ObserveArgs struct {
	Desktop       string  `json:"desktop,omitempty" jsonschema:"desktop id from computer_desktops; optional when there is one"`
	Monitor       *int    `json:"monitor,omitempty" min:"-1" max:"64" jsonschema:"monitor index; omitted or -1: all monitors stitched"`
	Region        *Region `json:"region,omitempty" jsonschema:"a rectangle inside an earlier observation's image instead of a monitor"`
	Format        string  `json:"format,omitempty" enum:"png,jpeg" jsonschema:"image format; png by default"`
	Quality       int     `json:"quality,omitempty" min:"0" max:"100" jsonschema:"JPEG quality 1-100 (default 80)"`
	MaxEdge       int     `json:"max_edge,omitempty" min:"0" max:"16384" jsonschema:"longest image edge in pixels (default 1280): a larger capture is scaled down to it, never up; coordinates stay exact"`
	Cursor        bool    `json:"include_cursor,omitempty" jsonschema:"draw the pointer into the image"`
	Accessibility bool    `json:"accessibility,omitempty" jsonschema:"include bounded accessibility text where the platform has it"`
}

// ImageInfo describes the image returned beside the JSON.
type ImageInfo struct {
	MIMEType    string  `json:"mime_type"`
	Width       int     `json:"width"`
	Height      int     `json:"height"`
	Bytes       int     `json:"bytes"`
	Origin      [2]int  `json:"origin" jsonschema:"native coordinates of the image's top-left corner"`
	NativeSize  [2]int  `json:"native_size" jsonschema:"native width and height the image covers; image x maps to native origin.x + x*native_width/width"`
	Scale       float64 `json:"scale" jsonschema:"image pixels per native unit (width / native width)"`
	CaptureSize [2]int  `json:"capture_size" jsonschema:"the capture's pixels before it was scaled down to max_edge"`
}

// MonitorInfo is a monitor in the image's coordinates.
type MonitorInfo struct {
	Index   int         `json:"index"`
	Name    string      `json:"name,omitempty"`
	Primary bool        `json:"primary,omitempty"`
	Bounds  native.Rect `json:"bounds"`
	Scale   float64     `json:"scale"`
}

// Accessibility is an observation's accessibility text, or why there is none.
type Accessibility struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	Text      string `json:"text,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Point is a position in image coordinates.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// Observation is computer_observe's response. Every coordinate in it is in
// the image's pixels.
type Observation struct {
	ObservationID string         `json:"observation_id"`
	ExpiresAt     string         `json:"expires_at" jsonschema:"RFC 3339; the reference is refused after it"`
	Desktop       string         `json:"desktop"`
	Image         ImageInfo      `json:"image"`
	Monitors      []MonitorInfo  `json:"monitors"`
	Windows       []WindowInfo   `json:"windows,omitempty"`
	Cursor        *Point         `json:"cursor,omitempty" jsonschema:"pointer position when inside the image"`
	Accessibility *Accessibility `json:"accessibility,omitempty"`

	// Images are the image itself, which travels beside the JSON.
	Images []opsapi.Image `json:"-"`
}

// ResultImages hands the image to the transport.
func (o Observation) ResultImages() []opsapi.Image { return o.Images }

// ActArgs is computer_act's request.
type ActArgs struct {
	ObservationID string   `json:"observation_id" jsonschema:"the current observation; the act consumes it"`
	Action        string   `json:"action" enum:"click,move,drag,scroll,type,key,focus,mouse_down,mouse_up,hold_key"`
	X             *int     `json:"x,omitempty" min:"0" max:"1048576" jsonschema:"image x for click, move and scroll"`
	Y             *int     `json:"y,omitempty" min:"0" max:"1048576"`
	Button        string   `json:"button,omitempty" enum:"left,middle,right"`
	Count         int      `json:"count,omitempty" min:"0" max:"3" jsonschema:"clicks (1-3, default 1)"`
	Path          [][2]int `json:"path,omitempty" min:"0" max:"1048576" jsonschema:"drag: [[x,y],...] at least two image points"`
	DX            int      `json:"dx,omitempty" min:"-120000" max:"120000" jsonschema:"scroll: signed wheel units, 120 per notch, positive right"`
	DY            int      `json:"dy,omitempty" min:"-120000" max:"120000" jsonschema:"scroll: signed wheel units, 120 per notch, positive down"`
	Text          string   `json:"text,omitempty" jsonschema:"type: literal text (never through the clipboard)"`
	Keys          string   `json:"keys,omitempty" jsonschema:"key and hold_key: a chord such as ctrl+shift+t or enter"`
	DurationMS    int      `json:"duration_ms,omitempty" min:"0" max:"5000" jsonschema:"hold_key: how long to hold the chord, 1-5000 ms"`
	Modifiers     []string `json:"modifiers,omitempty" jsonschema:"held during click or scroll: shift, ctrl, alt, super"`
	WindowRef     string   `json:"window_ref,omitempty" jsonschema:"focus: a window reference from the observation"`
	SettleMS      *int     `json:"settle_ms,omitempty" min:"0" max:"5000" jsonschema:"wait before the new observation, 0-5000 ms (default 150)"`
}

// Receipt statuses.
const (
	NotDispatched = "not_dispatched"
	Accepted      = "accepted"
	Partial       = "partial"
	Unknown       = "unknown"
)

// Receipt says what happened to an act's input. Accepted means the OS took
// it, not that any application acted on it.
type Receipt struct {
	Status     string         `json:"status" enum:"not_dispatched,accepted,partial,unknown"`
	Steps      int            `json:"steps" jsonschema:"input steps the act consists of"`
	Dispatched int            `json:"dispatched" jsonschema:"steps the OS accepted"`
	Error      *errcode.Error `json:"error,omitempty"`
}

// ActResult is computer_act's response.
type ActResult struct {
	Receipt          Receipt        `json:"receipt"`
	Observation      *Observation   `json:"observation,omitempty" jsonschema:"the fresh observation after the act"`
	ObservationError *errcode.Error `json:"observation_error,omitempty" jsonschema:"why there is no fresh observation; the receipt stands"`
}

// ResultImages hands the fresh observation's image to the transport.
func (a ActResult) ResultImages() []opsapi.Image {
	if a.Observation == nil {
		return nil
	}
	return a.Observation.Images
}
