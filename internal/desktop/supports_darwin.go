package desktop

// unsupported are the operations not implemented on macOS yet: launching
// applications and the clipboard.
var unsupported = []string{"computer_launch_app", "computer_clipboard_read", "computer_clipboard_write"}
