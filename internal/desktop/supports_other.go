//go:build !darwin

package desktop

// unsupported is empty: Linux (X11) and Windows implement every
// operation.
var unsupported []string
