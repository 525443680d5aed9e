package approvals

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// Notifier shows each new approval as a desktop notification, where the
// OS offers one, and takes the user's answer from its buttons where the
// notification server supports actions. Everything is best effort: with
// no notification service (no session bus, no notify-send) nothing is
// shown and approvals are answered through the CLI or the console.
type Notifier struct {
	Broker *Broker
	// ConsoleURL is mentioned in the notification, if set.
	ConsoleURL string
}

// Notify shows a for at most the approval's life. It blocks while the
// notification is up, so run it in its own goroutine (Options.Notify does).
func (n *Notifier) Notify(a Approval) {
	// The summary is the agent's text: shown through textsafe, so that
	// control and invisible characters cannot disguise the action.
	title := "hostlink: approve " + textsafe.Line(a.Action.Op) + "?"
	body := textsafe.Line(a.Action.Summary)
	if n.ConsoleURL != "" {
		body += "\n" + n.ConsoleURL
	}
	ctx, cancel := context.WithDeadline(context.Background(), a.Deadline)
	defer cancel()
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd":
		n.notifySend(ctx, a, title, body)
	case "darwin":
		// Notification Center has no buttons for a script; the user
		// answers in the console or the CLI.
		script := `display notification ` + appleQuote(body) + ` with title ` + appleQuote(title)
		procs.Output(ctx, procs.Spec{Argv: []string{"osascript", "-e", script}, Dir: "/"}, 4<<10, nil)
	}
}

// sessionEnv are the variables notify-send needs to reach the desktop's
// notification server; the child's environment is otherwise scrubbed.
var sessionEnv = []string{"DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY"}

// notifySend uses libnotify's notify-send with two actions; --wait keeps
// it running until the user clicks one (it prints the action's name) or
// the notification closes.
func (n *Notifier) notifySend(ctx context.Context, a Approval, title, body string) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" && os.Getenv("XDG_RUNTIME_DIR") == "" {
		return
	}
	if _, err := exec.LookPath("notify-send"); err != nil {
		return
	}
	env := map[string]string{}
	for _, k := range sessionEnv {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	pr, pw := io.Pipe()
	p, err := procs.Start(procs.Spec{Argv: []string{"notify-send", "--app-name=hostlink", "--urgency=critical",
		"--expire-time=" + strconv.FormatInt(max(time.Until(a.Deadline).Milliseconds(), 0), 10),
		"--action=approve=Approve", "--action=deny=Deny", "--wait", title, markupEscaper.Replace(body)}, Dir: "/", Env: env}, pw, nil)
	if err != nil {
		return
	}
	go func() {
		select {
		case <-ctx.Done():
			p.Terminate(time.Second)
		case <-p.Done():
		}
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case "approve":
			n.Broker.Decide(a.ID, true, "desktop notification", audit.Notification)
		case "deny":
			n.Broker.Decide(a.ID, false, "desktop notification", audit.Notification)
		}
	}
	pr.Close()
	p.Wait()
}

// markupEscaper escapes the body for notification servers that read it
// as markup (the body-markup capability): "<b>" must show, not bold.
var markupEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func appleQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
