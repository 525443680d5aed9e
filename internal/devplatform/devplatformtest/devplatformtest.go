// Package devplatformtest serves the development platform to tests.
package devplatformtest

import (
	"net/http"
	"testing"

	"github.com/hostlink/hostlink/internal/devplatform"
)

// Serve serves srv on a free loopback port until t ends and returns the
// URL of its control endpoint, which a link dials.
func Serve(t testing.TB, srv *devplatform.Server) string {
	t.Helper()
	ln, err := devplatform.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "ws://" + ln.Addr().String() + devplatform.ControlPath
}
