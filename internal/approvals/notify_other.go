//go:build !linux && !freebsd && !openbsd && !netbsd && !darwin

package approvals

import "context"

// show shows nothing: this OS has no notification service hostlink talks
// to, and approvals are answered through the CLI or the console.
func (n *Notifier) show(context.Context, Approval, string, string) {}
