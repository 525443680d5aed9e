package approvals

import (
	"context"
	"strings"

	"github.com/hostlink/hostlink/internal/procs"
)

// show posts a to Notification Center, which has no buttons for a script:
// the user answers in the console or the CLI.
func (n *Notifier) show(ctx context.Context, a Approval, title, body string) {
	script := `display notification ` + appleQuote(body) + ` with title ` + appleQuote(title)
	procs.Output(ctx, procs.Spec{Argv: []string{"osascript", "-e", script}, Dir: "/"}, 4<<10, nil)
}

func appleQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
