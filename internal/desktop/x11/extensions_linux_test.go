package x11

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/xproto"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
)

// TestOpenWhileOthersRead opens backends at once while the ones already open
// receive events. Every connection's reader goroutine reads xgb's shared
// decoder maps for each event, so opening a connection must not write them;
// under -race (as CI runs it) a write fails this test.
func TestOpenWhileOthersRead(t *testing.T) {
	d := xvfbtest.Start(t, 640, 480)
	first := open(t, d)
	// Every open connection hears property changes on the root window.
	watch := func(b *Backend) error {
		return xproto.ChangeWindowAttributesChecked(b.conn, b.root, xproto.CwEventMask,
			[]uint32{xproto.EventMaskPropertyChange}).Check()
	}
	if err := watch(first); err != nil {
		t.Fatal(err)
	}
	prop := first.atom("HOSTLINK_TEST_PROPERTY")
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := Open(d.Name)
			if err != nil {
				t.Error(err)
				return
			}
			defer b.Close()
			if err := watch(b); err != nil {
				t.Error(err)
				return
			}
			for j := 0; j < 20; j++ {
				if err := xproto.ChangePropertyChecked(b.conn, xproto.PropModeReplace, b.root, prop,
					xproto.AtomCardinal, 32, 1, []byte{byte(j), 0, 0, 0}).Check(); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := b.Monitors(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ev, xerr := first.conn.WaitForEvent(); xerr != nil || ev == nil {
		t.Fatalf("the first connection heard no property change: %v %v", ev, xerr)
	}
}

// TestExtensionErrorReachesRequest checks that an extension's X error is
// decoded and returned to the request that caused it. hostlink installs no
// extension's own decoders; an error without a decoder would be dropped by
// xgb and its request would wait for ever.
func TestExtensionErrorReachesRequest(t *testing.T) {
	d := xvfbtest.Start(t, 640, 480)
	b := open(t, d)
	if _, ok := b.conn.Extensions["RANDR"]; !ok {
		t.Fatal("Xvfb without RandR")
	}
	_, err := randr.GetOutputInfo(b.conn, randr.Output(0x1ffffff), 0).Reply()
	var xe extError
	if !errors.As(err, &xe) || xe.BadId() != 0x1ffffff {
		t.Fatalf("GetOutputInfo of no output: %T %v", err, err)
	}
	t.Log(err)
	// The connection still works after it.
	if _, err := b.Monitors(context.Background()); err != nil {
		t.Fatal(err)
	}
}
