package console_test

import (
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/console"
)

// The status page says plainly when the command sandbox cannot be set up
// (commands are refused), when it is off, and what it is otherwise.
func TestStatusShowsSandbox(t *testing.T) {
	for _, tc := range []struct {
		sandbox map[string]any
		want    []string
	}{
		{map[string]any{"mode": "failed", "mechanism": "none", "reason": "neither user namespaces nor Landlock are available"},
			[]string{"<strong>FAILED: commands are refused, never run unconfined</strong> (neither user namespaces nor Landlock are available)"}},
		{map[string]any{"mode": "off", "mechanism": "none", "reason": `[commands] sandbox = "off"`},
			[]string{"<strong>off</strong>: commands run with all of your permissions"}},
		{map[string]any{"mode": "workdir", "mechanism": "landlock", "unenforced": []any{"udp", "unix-sockets"}},
			[]string{"workdir via landlock; not enforced here: udp, unix-sockets."}},
	} {
		t.Run(tc.sandbox["mode"].(string), func(t *testing.T) {
			srv, _, _ := newConsoleWith(t, func(o *console.Options) {
				o.Status = func() any { return map[string]any{"version": "v1", "sandbox": tc.sandbox} }
			})
			c, _ := login(t, srv)
			body := get(t, c, srv.URL+"/console/status")
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("status page lacks %q:\n%s", w, body)
				}
			}
		})
	}
}
