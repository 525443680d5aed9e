package wire

// Computer-use messages of protocol v1.1 (COMPUTER_USE.md), each mapped
// onto a computer_* operation.
const (
	TypeScreenshotRequest      = "SCREENSHOT_REQUEST"
	TypeScreenshotResponse     = "SCREENSHOT_RESPONSE"
	TypeInputAction            = "INPUT_ACTION"
	TypeDisplayInfoRequest     = "DISPLAY_INFO_REQUEST"
	TypeDisplayInfoResponse    = "DISPLAY_INFO_RESPONSE"
	TypeCursorPositionRequest  = "CURSOR_POSITION_REQUEST"
	TypeCursorPositionResponse = "CURSOR_POSITION_RESPONSE"
)

// The computer-use messages beyond screenshots, input, cursor and display
// info, each mapped onto one computer_* operation.
const (
	TypeWindowListRequest        = "WINDOW_LIST_REQUEST"
	TypeWindowListResponse       = "WINDOW_LIST_RESPONSE"
	TypeWindowFocus              = "WINDOW_FOCUS"
	TypeAppListRequest           = "APP_LIST_REQUEST"
	TypeAppListResponse          = "APP_LIST_RESPONSE"
	TypeAppLaunch                = "APP_LAUNCH"
	TypeClipboardRead            = "CLIPBOARD_READ"
	TypeClipboardReadResponse    = "CLIPBOARD_READ_RESPONSE"
	TypeClipboardWrite           = "CLIPBOARD_WRITE"
	TypePermissionsCheckRequest  = "PERMISSIONS_CHECK_REQUEST"
	TypePermissionsCheckResponse = "PERMISSIONS_CHECK_RESPONSE"
)

// WindowListRequest is WINDOW_LIST_REQUEST's payload.
type WindowListRequest struct {
	AppBundleID      *string `json:"app_bundle_id"`
	IncludeMinimized bool    `json:"include_minimized"`
	IncludeOffscreen bool    `json:"include_offscreen"`
}

// WindowEntry is one window of WINDOW_LIST_RESPONSE. Bounds are
// display-global [x1, y1, x2, y2], like a screenshot region.
type WindowEntry struct {
	WindowID     string `json:"window_id"`
	PID          int    `json:"pid"`
	AppName      string `json:"app_name"`
	AppBundleID  string `json:"app_bundle_id"`
	Title        string `json:"title"`
	Bounds       [4]int `json:"bounds"`
	Monitor      int    `json:"monitor"`
	IsFocused    bool   `json:"is_focused"`
	IsMinimized  bool   `json:"is_minimized"`
	IsFullscreen bool   `json:"is_fullscreen"`
}

// WindowFocus is WINDOW_FOCUS's payload.
type WindowFocus struct {
	WindowID string `json:"window_id"`
	Raise    *bool  `json:"raise"`
}

// AppLaunch is APP_LAUNCH's payload. On Linux bundle_id is a desktop file
// id.
type AppLaunch struct {
	BundleID       *string  `json:"bundle_id"`
	ExecutablePath *string  `json:"executable_path"`
	Args           []string `json:"args"`
	Activate       *bool    `json:"activate"`
}

// Clipboard is CLIPBOARD_READ's and CLIPBOARD_WRITE's payload.
type Clipboard struct {
	Format  string `json:"format"`
	Content string `json:"content"`
}

// PermissionsCheck is PERMISSIONS_CHECK_REQUEST's payload.
type PermissionsCheck struct {
	Permissions []string `json:"permissions"`
}

// ScreenshotRequest is SCREENSHOT_REQUEST's payload.
type ScreenshotRequest struct {
	Monitor       *int    `json:"monitor"` // 0 primary, -1 all stitched, n the n-th
	Quality       int     `json:"quality"`
	Region        *[4]int `json:"region"` // display-global [x1, y1, x2, y2]
	WindowID      *string `json:"window_id"`
	Format        string  `json:"format"`
	IncludeCursor *bool   `json:"include_cursor"`
}

// ScreenshotResponse is SCREENSHOT_RESPONSE's payload.
type ScreenshotResponse struct {
	ImageBase64  string         `json:"image_base64"`
	MIMEType     string         `json:"mime_type"`
	Width        int            `json:"width"`
	Height       int            `json:"height"`
	Monitor      int            `json:"monitor"`
	Region       *[4]int        `json:"region"`
	DisplayScale float64        `json:"display_scale"`
	LogicalSize  [2]int         `json:"logical_size"`
	Meta         map[string]any `json:"meta"`
}

// InputAction is INPUT_ACTION's payload.
type InputAction struct {
	Action          string   `json:"action"`
	Coordinate      *[2]int  `json:"coordinate"`
	Text            *string  `json:"text"`
	Key             *string  `json:"key"`
	Direction       *string  `json:"direction"`
	Clicks          *int     `json:"clicks"`
	Button          *string  `json:"button"`
	Modifiers       []string `json:"modifiers"`
	ScrollAmount    *int     `json:"scroll_amount"`
	ScrollDirection *string  `json:"scroll_direction"`
	DurationMS      *int     `json:"duration_ms"`
	Path            [][2]int `json:"path"`
	Paste           bool     `json:"paste"`
}

// DisplayInfo is one monitor in DISPLAY_INFO_RESPONSE.
type DisplayInfo struct {
	Index        int     `json:"index"`
	Primary      bool    `json:"primary"`
	PhysicalSize [2]int  `json:"physical_size"`
	LogicalSize  [2]int  `json:"logical_size"`
	Scale        float64 `json:"scale"`
	Origin       [2]int  `json:"origin"`
}

// DisplayInfoResponse is DISPLAY_INFO_RESPONSE's payload.
type DisplayInfoResponse struct {
	Monitors []DisplayInfo `json:"monitors"`
}

// CursorPositionResponse is CURSOR_POSITION_RESPONSE's payload:
// display-global coordinates and the monitor holding them.
type CursorPositionResponse struct {
	X       int `json:"x"`
	Y       int `json:"y"`
	Monitor int `json:"monitor"`
}

// WindowListResponse is WINDOW_LIST_RESPONSE's payload.
type WindowListResponse struct {
	Windows   []WindowEntry `json:"windows"`
	Truncated bool          `json:"truncated"`
}

// WindowFocused is the ACK of WINDOW_FOCUS with ack_details granted:
// whether the window was focused when checked after the request.
type WindowFocused struct {
	OK      bool `json:"ok"`
	Focused bool `json:"focused"`
}

// AppEntry is one application of APP_LIST_RESPONSE; BundleID and
// ExecutablePath are null when unknown.
type AppEntry struct {
	PID            int     `json:"pid"`
	Name           string  `json:"name"`
	BundleID       *string `json:"bundle_id"`
	ExecutablePath *string `json:"executable_path"`
	IsFrontmost    bool    `json:"is_frontmost"`
	WindowCount    int     `json:"window_count"`
}

// AppListRequest is APP_LIST_REQUEST's payload.
type AppListRequest struct {
	IncludeBackground bool `json:"include_background"`
}

// AppListResponse is APP_LIST_RESPONSE's payload.
type AppListResponse struct {
	Apps []AppEntry `json:"apps"`
}

// AppLaunched is the ACK of APP_LAUNCH with ack_details granted: the
// started process.
type AppLaunched struct {
	OK  bool `json:"ok"`
	PID int  `json:"pid"`
}

// ClipboardReadResponse is CLIPBOARD_READ_RESPONSE's payload.
type ClipboardReadResponse struct {
	Format    string `json:"format"`
	Content   string `json:"content"`
	SizeBytes int    `json:"size_bytes"`
}

// PermissionsCheckResponse is PERMISSIONS_CHECK_RESPONSE's payload.
type PermissionsCheckResponse struct {
	Permissions map[string]string `json:"permissions"`
}
