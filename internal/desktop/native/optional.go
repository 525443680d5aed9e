package native

import (
	"context"
	"errors"
)

// Clipboard is implemented by backends that can read and write the
// desktop's clipboard text. The core decides whether a caller may use it
// (it is off unless the local user opts in); a backend only moves text.
type Clipboard interface {
	// ReadClipboard returns the clipboard's text, at most max bytes
	// (ErrTooLarge beyond). An empty clipboard is empty text.
	ReadClipboard(ctx context.Context, max int) (ClipboardText, error)
	// WriteClipboard makes text the clipboard's content; the backend keeps
	// serving it until another application takes the clipboard over.
	WriteClipboard(ctx context.Context, text string) error
}

// ClipboardText is what ReadClipboard found.
type ClipboardText struct {
	Text string
	// Concealed names the marker by which the owning application flagged
	// the content as secret (a password manager's hint), if any; the text
	// is then empty.
	Concealed string
	// Ours: hostlink itself still owns the clipboard (nothing replaced
	// what it wrote).
	Ours bool
}

// LaunchEnv is implemented by backends whose applications need variables
// to reach the desktop (an X11 display); launched applications get them on
// top of the scrubbed baseline environment.
type LaunchEnv interface {
	LaunchEnv() map[string]string
}

// ErrTooLarge: the content exceeds the caller's limit.
var ErrTooLarge = errors.New("content exceeds the size limit")
