//go:build linux || freebsd || openbsd || netbsd

package approvals

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// The Desktop Notifications Specification's service, on the session bus.
const (
	notifyDest  = "org.freedesktop.Notifications"
	notifyPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	notifyIface = "org.freedesktop.Notifications"
)

// show talks to the notification server over D-Bus: Notify with the
// actions "approve" and "deny" when the server's capabilities include
// actions, then waits for its ActionInvoked or NotificationClosed signal,
// a decision taken elsewhere, or the approval's deadline, and closes the
// notification unless the server did. A decision proposed meanwhile on
// the control channel (confirm_in_person) replaces the notification with
// one that shows it and offers to confirm exactly that proposal.
//
// Only the server's own signals count: any client of the session bus can
// emit an ActionInvoked, to everyone or to this connection alone, so a
// signal whose sender is not the unique name that owns
// org.freedesktop.Notifications is ignored.
func (n *Notifier) show(ctx context.Context, a Approval, title, body string) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" && os.Getenv("XDG_RUNTIME_DIR") == "" {
		return
	}
	conn, err := dbus.ConnectSessionBus(dbus.WithContext(ctx))
	if err != nil {
		return
	}
	defer conn.Close()
	obj := conn.Object(notifyDest, notifyPath)
	var caps []string
	if err := obj.CallWithContext(ctx, notifyIface+".GetCapabilities", 0).Store(&caps); err != nil {
		return
	}
	var server string
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, notifyDest).Store(&server); err != nil {
		return
	}
	var actions []string
	if slices.Contains(caps, "actions") {
		actions = []string{"approve", "Approve", "deny", "Deny"}
	}
	// Subscribed before Notify, so that an answer at once is not missed.
	if err := conn.AddMatchSignalContext(ctx, dbus.WithMatchObjectPath(notifyPath), dbus.WithMatchInterface(notifyIface)); err != nil {
		return
	}
	signals := make(chan *dbus.Signal, 16)
	conn.Signal(signals)
	changed := n.Broker.Changed()
	if !n.pending(a.ID) {
		return
	}
	expire := int32(min(max(time.Until(a.Deadline).Milliseconds(), 0), math.MaxInt32))
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(2))} // critical: stays until answered
	var id uint32
	notify := func(title, body string, actions []string) error {
		return obj.CallWithContext(ctx, notifyIface+".Notify", 0, "hostlink", id, "", title, markupEscaper.Replace(body),
			actions, hints, expire).Store(&id)
	}
	if err := notify(title, body, actions); err != nil {
		return
	}
	shown := "" // the proposal the notification offers to confirm
	closeIt := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		obj.CallWithContext(cctx, notifyIface+".CloseNotification", 0, id)
	}
	for {
		select {
		case <-ctx.Done():
			closeIt()
			return
		case <-changed:
			changed = n.Broker.Changed()
			cur, ok := n.Broker.Get(a.ID)
			if !ok || cur.State != Pending {
				closeIt()
				return
			}
			if p := cur.Proposal; p != nil && p.ID != shown && actions != nil {
				// Replaced in place (replaces_id): the old buttons are gone.
				shown = p.ID
				ptitle, pbody := proposalNotification(cur)
				if notify(ptitle, pbody, []string{"confirm:" + p.ID, "Confirm", "deny", "Deny"}) != nil {
					return
				}
			}
		case s, ok := <-signals:
			if !ok {
				return
			}
			if s.Sender != server || len(s.Body) == 0 || s.Body[0] != id {
				continue
			}
			switch s.Name {
			case notifyIface + ".ActionInvoked":
				if len(s.Body) == 2 {
					key, _ := s.Body[1].(string)
					switch {
					case key == "approve":
						n.Broker.DecideWith(a.ID, Decision{Approve: true, Person: true, By: NotifiedBy, Via: audit.Notification})
					case key == "deny":
						n.Broker.DecideWith(a.ID, Decision{Person: true, By: NotifiedBy, Via: audit.Notification})
					case strings.HasPrefix(key, "confirm:"):
						n.Broker.Confirm(a.ID, strings.TrimPrefix(key, "confirm:"), NotifiedBy, audit.Notification)
					default:
						continue
					}
				}
				closeIt()
				return
			case notifyIface + ".NotificationClosed":
				return
			}
		}
	}
}

// proposalNotification is the title and body that offer to confirm a's
// proposal: what it allows and who proposed it, through textsafe.
func proposalNotification(a Approval) (title, body string) {
	p := a.Proposal
	title = "hostlink: confirm approving " + textsafe.Line(a.Action.Op) + "?"
	body = textsafe.Line(a.Action.Summary) + "\nProposed by " + textsafe.Line(p.By) + " via " + textsafe.Line(string(p.Via)) +
		": allow " + textsafe.Line(p.Covers) + ". Confirm only if you asked for this."
	return title, body
}

// pending reports whether approval id is still waiting for a decision.
func (n *Notifier) pending(id string) bool {
	a, ok := n.Broker.Get(id)
	return ok && a.State == Pending
}

// markupEscaper escapes the body for notification servers that read it
// as markup (most do, whether or not they announce body-markup): "<b>"
// must show, not bold.
var markupEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
