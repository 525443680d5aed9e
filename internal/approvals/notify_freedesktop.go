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
// notification unless the server did.
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
	err = obj.CallWithContext(ctx, notifyIface+".Notify", 0, "hostlink", uint32(0), "", title, markupEscaper.Replace(body),
		actions, hints, expire).Store(&id)
	if err != nil {
		return
	}
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
			if !n.pending(a.ID) {
				closeIt()
				return
			}
		case s, ok := <-signals:
			if !ok {
				return
			}
			if len(s.Body) == 0 || s.Body[0] != id {
				continue
			}
			switch s.Name {
			case notifyIface + ".ActionInvoked":
				if len(s.Body) == 2 {
					switch s.Body[1] {
					case "approve":
						n.Broker.Decide(a.ID, true, NotifiedBy, audit.Notification)
					case "deny":
						n.Broker.Decide(a.ID, false, NotifiedBy, audit.Notification)
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

// pending reports whether approval id is still waiting for a decision.
func (n *Notifier) pending(id string) bool {
	a, ok := n.Broker.Get(id)
	return ok && a.State == Pending
}

// markupEscaper escapes the body for notification servers that read it
// as markup (most do, whether or not they announce body-markup): "<b>"
// must show, not bold.
var markupEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
