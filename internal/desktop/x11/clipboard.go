package x11

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// convertTimeout bounds the wait for a clipboard owner's answer.
const convertTimeout = 2 * time.Second

// concealedTarget is the target by which password managers (KeePassXC,
// KDE's Klipper convention) mark clipboard content as secret.
const concealedTarget = "x-kde-passwordManagerHint"

// clipboard owns and reads the CLIPBOARD selection over a connection of
// its own, whose event loop answers other clients' requests for the text
// hostlink wrote for as long as hostlink owns the selection.
type clipboard struct {
	conn  *xgb.Conn
	win   xproto.Window
	atoms map[string]xproto.Atom
	max   int // largest text one property change can carry

	mu     sync.Mutex
	text   string
	owned  bool
	notify chan xproto.SelectionNotifyEvent
}

// clip opens the clipboard connection on first use.
func (b *Backend) clip() (*clipboard, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.clipboard != nil {
		return b.clipboard, nil
	}
	conn, err := xgb.NewConnDisplay(b.display)
	if err != nil {
		return nil, native.ErrUnavailable
	}
	c := &clipboard{conn: conn, atoms: map[string]xproto.Atom{}, notify: make(chan xproto.SelectionNotifyEvent, 1)}
	setup := xproto.Setup(conn)
	c.max = int(setup.MaximumRequestLength)*4 - 1024
	root := setup.DefaultScreen(conn).Root
	for _, n := range []string{"CLIPBOARD", "TARGETS", "UTF8_STRING", "TEXT", "STRING", "ATOM", "INCR", "HOSTLINK_CLIPBOARD", concealedTarget} {
		r, err := xproto.InternAtom(conn, false, uint16(len(n)), n).Reply()
		if err != nil {
			conn.Close()
			return nil, native.ErrUnavailable
		}
		c.atoms[n] = r.Atom
	}
	if c.win, err = xproto.NewWindowId(conn); err == nil {
		err = xproto.CreateWindowChecked(conn, 0, c.win, root, 0, 0, 1, 1, 0, xproto.WindowClassInputOnly, 0, 0, nil).Check()
	}
	if err != nil {
		conn.Close()
		return nil, native.ErrUnavailable
	}
	go c.loop()
	b.clipboard = c
	return c, nil
}

// loop handles the clipboard connection's events until it is closed.
func (c *clipboard) loop() {
	for {
		ev, err := c.conn.WaitForEvent()
		if ev == nil && err == nil {
			return
		}
		switch e := ev.(type) {
		case xproto.SelectionRequestEvent:
			c.serve(e)
		case xproto.SelectionClearEvent:
			c.mu.Lock()
			c.owned, c.text = false, ""
			c.mu.Unlock()
		case xproto.SelectionNotifyEvent:
			select {
			case c.notify <- e:
			default:
			}
		}
	}
}

// serve answers one client's request for the selection hostlink owns:
// TARGETS, or the text as UTF8_STRING, TEXT or STRING. Anything else is
// refused (property None), as ICCCM has it.
func (c *clipboard) serve(e xproto.SelectionRequestEvent) {
	c.mu.Lock()
	text, owned := c.text, c.owned
	c.mu.Unlock()
	prop := e.Property
	if prop == xproto.AtomNone {
		prop = e.Target // an obsolete client
	}
	a := c.atoms
	switch {
	case !owned || e.Selection != a["CLIPBOARD"]:
		prop = xproto.AtomNone
	case e.Target == a["TARGETS"]:
		targets := []xproto.Atom{a["TARGETS"], a["UTF8_STRING"], a["TEXT"], a["STRING"]}
		data := make([]byte, 4*len(targets))
		for i, t := range targets {
			xgb.Put32(data[4*i:], uint32(t))
		}
		xproto.ChangeProperty(c.conn, xproto.PropModeReplace, e.Requestor, prop, a["ATOM"], 32, uint32(len(targets)), data)
	case e.Target == a["UTF8_STRING"] || e.Target == a["TEXT"] || e.Target == a["STRING"]:
		typ := a["UTF8_STRING"]
		if e.Target == a["STRING"] {
			typ = a["STRING"]
		}
		xproto.ChangeProperty(c.conn, xproto.PropModeReplace, e.Requestor, prop, typ, 8, uint32(len(text)), []byte(text))
	default:
		prop = xproto.AtomNone
	}
	ev := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: prop}
	xproto.SendEvent(c.conn, false, e.Requestor, 0, string(ev.Bytes()))
}

// WriteClipboard takes the CLIPBOARD selection and serves text from it.
func (b *Backend) WriteClipboard(ctx context.Context, text string) error {
	c, err := b.clip()
	if err != nil {
		return err
	}
	if len(text) > c.max {
		return native.ErrTooLarge
	}
	c.mu.Lock()
	c.text, c.owned = text, true
	c.mu.Unlock()
	if err := xproto.SetSelectionOwnerChecked(c.conn, c.win, c.atoms["CLIPBOARD"], xproto.TimeCurrentTime).Check(); err != nil {
		return err
	}
	r, err := xproto.GetSelectionOwner(c.conn, c.atoms["CLIPBOARD"]).Reply()
	if err != nil || r.Owner != c.win {
		c.mu.Lock()
		c.owned = false
		c.mu.Unlock()
		return errors.New("the X server did not give hostlink the clipboard")
	}
	return nil
}

// ReadClipboard returns the CLIPBOARD selection's text. The text hostlink
// still owns is returned without a round trip; another owner is asked to
// convert it, after checking that it does not mark it secret.
func (b *Backend) ReadClipboard(ctx context.Context, max int) (native.ClipboardText, error) {
	c, err := b.clip()
	if err != nil {
		return native.ClipboardText{}, err
	}
	r, err := xproto.GetSelectionOwner(c.conn, c.atoms["CLIPBOARD"]).Reply()
	if err != nil {
		return native.ClipboardText{}, native.ErrUnavailable
	}
	switch r.Owner {
	case xproto.WindowNone:
		return native.ClipboardText{}, nil
	case c.win:
		c.mu.Lock()
		text, owned := c.text, c.owned
		c.mu.Unlock()
		if owned {
			if len(text) > max {
				return native.ClipboardText{}, native.ErrTooLarge
			}
			return native.ClipboardText{Text: text, Ours: true}, nil
		}
	}
	targets, err := c.convert(ctx, c.atoms["TARGETS"], 4096)
	if err == nil && targets.Format == 32 {
		for i := 0; i+4 <= len(targets.Value); i += 4 {
			if xproto.Atom(xgb.Get32(targets.Value[i:])) == c.atoms[concealedTarget] {
				return native.ClipboardText{Concealed: concealedTarget}, nil
			}
		}
	}
	for _, t := range []string{"UTF8_STRING", "STRING"} {
		p, err := c.convert(ctx, c.atoms[t], max)
		if err != nil {
			return native.ClipboardText{}, err
		}
		if p == nil {
			continue
		}
		if p.Type == c.atoms["INCR"] || p.BytesAfter > 0 || len(p.Value) > max {
			return native.ClipboardText{}, native.ErrTooLarge
		}
		return native.ClipboardText{Text: string(p.Value)}, nil
	}
	return native.ClipboardText{}, nil
}

// convert asks the owner for target into hostlink's window and reads the
// result (nil when the owner refused), at most max bytes plus one word so
// that a longer value shows as BytesAfter.
func (c *clipboard) convert(ctx context.Context, target xproto.Atom, max int) (*xproto.GetPropertyReply, error) {
	select {
	case <-c.notify:
	default:
	}
	prop := c.atoms["HOSTLINK_CLIPBOARD"]
	xproto.ConvertSelection(c.conn, c.win, c.atoms["CLIPBOARD"], target, prop, xproto.TimeCurrentTime)
	t := time.NewTimer(convertTimeout)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, errors.New("the clipboard owner did not answer")
		case e := <-c.notify:
			if e.Target != target {
				continue
			}
			if e.Property == xproto.AtomNone {
				return nil, nil
			}
			return xproto.GetProperty(c.conn, true, c.win, prop, xproto.GetPropertyTypeAny, 0, uint32(max/4+1)).Reply()
		}
	}
}

// LaunchEnv is what an application needs to reach this display.
func (b *Backend) LaunchEnv() map[string]string {
	env := map[string]string{"DISPLAY": b.display}
	if v := os.Getenv("XAUTHORITY"); v != "" {
		env["XAUTHORITY"] = v
	}
	return env
}

var (
	_ native.Clipboard = (*Backend)(nil)
	_ native.LaunchEnv = (*Backend)(nil)
)
