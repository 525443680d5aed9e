package link

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/conformance"
	"github.com/hostlink/hostlink/internal/hostinfo"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// TestHelloParsesUpstream builds the HELLO of every OS and architecture
// hostlink runs on, on the control and a data connection, with every
// capability it can advertise and with none, and parses each as
// upstream's platform does: with its own models, extra fields forbidden.
// A platform built on upstream refuses a HELLO that fails, and with it
// every session.
func TestHelloParsesUpstream(t *testing.T) {
	m := conformance.Upstream()
	type variant struct {
		platform, root string
		sandbox        sandbox.Status
		// Desktop features the backend of that OS serves.
		features, coarse []string
	}
	full := []string{"screenshot.region", "input.click.modifiers", "input.click.button", "input.drag.path", "input.key.hold",
		"input.mouse.down_up", "input.scroll.amount", "input.wait", "cursor.position", "display.info", "screenshot.window",
		"window.list", "window.focus", "app.list", "app.launch", "clipboard.read", "clipboard.write", "permissions.check"}
	fullCoarse := []string{"screenshot", "input", "windows", "apps", "clipboard", "permissions"}
	var mac []string
	for _, f := range full {
		if f != "app.launch" && !strings.HasPrefix(f, "clipboard.") {
			mac = append(mac, f)
		}
	}
	for _, v := range []variant{
		{"linux", "/home/alice/proj", sandbox.Status{Mode: sandbox.Workdir, Mechanism: "namespaces+landlock", LandlockABI: 6, UserNamespaces: true}, full, fullCoarse},
		{"wsl2", "/home/alice/proj", sandbox.Status{Mode: sandbox.Off, Mechanism: "none", Reason: "no Landlock and no user namespaces"}, nil, nil},
		{"darwin", "/Users/alice/proj", sandbox.Status{Mode: sandbox.Workdir, Mechanism: "seatbelt"}, mac, []string{"screenshot", "input", "windows", "apps", "permissions"}},
		{"windows", `C:\Users\alice\proj`, sandbox.Status{Mode: sandbox.Workdir, Mechanism: "low-integrity", Unenforced: []string{"hidden-listing"}}, full, fullCoarse},
	} {
		for _, arch := range []string{"amd64", "arm64"} {
			a, err := hostinfo.NormalizeArch(arch)
			if err != nil {
				t.Fatal(err)
			}
			info := hostinfo.Info{Platform: v.platform, Arch: a, MachineID: "3d1219c7-c4c5-404a-aa1f-6d2a48adfda4",
				Hostname: strings.Repeat("é", 100), Version: "1.2.3"}
			for _, everything := range []bool{false, true} {
				o := Options{URL: "wss://platform.example/ws/local-executor", Token: "t", Info: info}
				if everything {
					o.Shell, o.Agents = true, true
					o.ShellSandbox = func() sandbox.Status { return v.sandbox }
					o.IdemPath = filepath.Join(t.TempDir(), "link.db")
					if v.features != nil {
						o.ComputerUse = func() (bool, [2]int) { return true, [2]int{2560, 1440} }
					}
				}
				s, err := New(o)
				if err != nil {
					t.Fatal(err)
				}
				root := v.root
				for _, c := range []*Client{s.newClient(o.URL, "", nil), s.newClient(o.URL+"/chat-1", "chat-1", &root)} {
					c.Features = func() ([]string, []string) { return v.features, v.coarse }
					caps := c.Capabilities()
					env, err := wire.NewEnvelope(wire.TypeHello, wire.NewID(), wire.Version, c.hello(caps))
					if err != nil {
						t.Fatal(err)
					}
					b, err := env.Encode()
					if err != nil {
						t.Fatal(err)
					}
					if _, _, diffs := m.Frame("", b); len(diffs) > 0 {
						t.Errorf("%s/%s, capabilities %v: upstream's parser rejects HELLO: %v\n%s", v.platform, a, caps, diffs, b)
					}
				}
				if s.idem != nil {
					s.idem.Close()
				}
			}
		}
	}
}
