package approvals

import (
	"context"

	"github.com/hostlink/hostlink/internal/textsafe"
)

// Notifier shows each new approval as a desktop notification, where the
// OS offers one, and takes the user's answer from its Approve and Deny
// buttons where the notification server supports actions. Everything is
// best effort: with no notification service (no session bus, no server
// on it) nothing is shown and approvals are answered through the CLI or
// the console.
type Notifier struct {
	Broker *Broker
	// ConsoleURL is mentioned in the notification, if set.
	ConsoleURL string
}

// NotifiedBy is who a decision taken on a notification's button is
// recorded as (with via audit.Notification).
const NotifiedBy = "desktop notification"

// Notify shows a for at most the approval's life, and withdraws it once a
// is decided elsewhere. It blocks while the notification is up, so run it
// in its own goroutine (Options.Notify does).
func (n *Notifier) Notify(a Approval) {
	title, body := notification(a, n.ConsoleURL)
	ctx, cancel := context.WithDeadline(context.Background(), a.Deadline)
	defer cancel()
	n.show(ctx, a, title, body)
}

// notification is a's title and body: the summary the console shows, on
// one line through textsafe, so that control, bidirectional and invisible
// characters cannot disguise the action.
func notification(a Approval, consoleURL string) (title, body string) {
	title = "hostlink: approve " + textsafe.Line(a.Action.Op) + "?"
	body = textsafe.Line(a.Action.Summary)
	if consoleURL != "" {
		body += "\n" + consoleURL
	}
	return title, body
}
