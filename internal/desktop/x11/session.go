package x11

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hostlink/hostlink/internal/desktop/atspi"
)

// dbusTimeout bounds the screen saver query: a hung session bus must not
// hold the desktop's queue.
const dbusTimeout = 2 * time.Second

// sessionBus connects to the session bus named by DBUS_SESSION_BUS_ADDRESS.
// Without that variable there is no bus to use; godbus would otherwise try
// to start one with dbus-launch, which hostlink must not do.
func sessionBus() (*dbus.Conn, error) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return nil, fmt.Errorf("no session bus")
	}
	return dbus.ConnectSessionBus()
}

// sessionLocked asks the freedesktop screen saver whether the session is
// locked; with no session bus or no screen saver service it answers false.
func (b *Backend) sessionLocked(ctx context.Context) bool {
	bus, err := sessionBus()
	if err != nil {
		return false
	}
	defer bus.Close()
	ctx, cancel := context.WithTimeout(ctx, dbusTimeout)
	defer cancel()
	var active bool
	err = bus.Object("org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver").
		CallWithContext(ctx, "org.freedesktop.ScreenSaver.GetActive", 0).Store(&active)
	return err == nil && active
}

// Accessibility reads the AT-SPI tree of the session bus's applications.
func (b *Backend) Accessibility(ctx context.Context, max int) (string, error) {
	return atspi.Text(ctx, os.Getenv("DBUS_SESSION_BUS_ADDRESS"), max)
}
