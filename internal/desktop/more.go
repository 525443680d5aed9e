package desktop

import "github.com/hostlink/hostlink/internal/ops"

// extras is the Service's state for the operations beyond observe and act.
// Its zero value is ready.
type extras struct {
	windows windowIDs
	written writeback
}

// registerMore adds the operations the wire protocol's computer-use
// messages need besides observe and act: windows, focus, applications,
// permissions and, only when the local user opted in, the clipboard.
func registerMore(r *ops.Registry, s *Service) {
	spec := ops.SpecsFor(Capability)
	ops.Register(r, spec("computer_windows", "List windows",
		"The desktop's top-level windows (native coordinates) with opaque window ids for computer_focus_window. An id never names another window: it is re-verified (same handle, process, application) before each use, else WINDOW_STALE.",
		true, false, false), value(s.windows))
	ops.Register(r, spec("computer_focus_window", "Focus a window",
		"Activate and raise a window listed by computer_windows, through the window manager. Returns a receipt and whether the window was focused afterwards.",
		false, false, true), value(s.focusWindow))
	ops.Register(r, spec("computer_apps", "List applications",
		"The running applications that have windows (pid, name, program, frontmost, window count) and, if asked, the installed applications computer_launch_app can start.",
		true, false, true), value(s.apps))
	ops.Register(r, spec("computer_launch_app", "Launch an application",
		"Start an installed application (Linux: an XDG desktop entry, by id or by its program's path) without a shell, with a scrubbed environment, as a child of hostlink that ends when hostlink stops.",
		false, false, false), value(s.launchApp))
	ops.Register(r, spec("computer_permissions", "Check OS permissions",
		"Whether the OS permissions computer use needs are granted (screen_recording, accessibility, input_monitoring): granted, denied, unknown or not_applicable. Never prompts.",
		true, false, true), value(s.permissions))
	if !s.opts.Clipboard.Enabled {
		return
	}
	ops.Register(r, spec("computer_clipboard_read", "Read the clipboard",
		"The clipboard's text. Unless the local user allowed foreign reads, only text hostlink wrote within 30 s and still unchanged (else CLIPBOARD_CONCEALED); content its owner marks secret is always concealed. Audited as size and hash only.",
		true, false, false), value(s.clipboardRead))
	ops.Register(r, spec("computer_clipboard_write", "Write the clipboard",
		"Put text on the clipboard, replacing what is there (nothing is restored). Audited as size and hash only.",
		false, true, true), value(s.clipboardWrite))
}
