package manpage

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/hostlink/hostlink/internal/tstest"
)

type testCLI struct {
	Verbose bool `short:"v" help:"Say more."`
	Get     struct {
		Path   string `arg:"" help:"What to get."`
		Format string `enum:"json,text" default:"text" help:"How to print it."`
	} `cmd:"" help:"Get a thing\u2026 -- or two."`
	Audit struct {
		Verify struct {
			Dir string `arg:"" optional:"" help:".dir starts with a dot; a \\ backslash."`
		} `cmd:"" help:"Verify the log."`
	} `cmd:"" help:"Inspect the log."`
	Secret struct{} `cmd:"" hidden:"" help:"Not shown."`
}

func render(t *testing.T) string {
	t.Helper()
	var cli testCLI
	k, err := kong.New(&cli, kong.Name("tool"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := Page{Name: "tool", Version: "1.2.3", Date: "2026-12-01", Summary: "a tool", Description: "First.\n\nSecond:\n\n  tool get x",
		Sections: []Section{{Title: "See also", Text: "tool(7)"}}}
	if err := Write(&b, p, k.Model); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWrite(t *testing.T) {
	page := render(t)
	for _, want := range []string{
		`.TH "TOOL" 1 "2026\-12\-01" "tool 1.2.3" "User Commands"`,
		".SH NAME\ntool \\- a tool\n",
		".SS tool get [flags] <path>\nGet a thing\\[u2026] \\-\\- or two.\n",
		".TP\n\\fB\\-\\-format\\fR=\\fIjson|text\\fR\nHow to print it. One of: json, text. Default: text.\n",
		".SS tool audit <command>\n", ".SS tool audit verify [<dir>]\n",
		"\\&.dir starts with a dot; a \\e backslash.\n",
		"\\fB\\-v\\fR, \\fB\\-\\-verbose\\fR\n",
		".nf\n  tool get x\n.fi\n",
		".SH SEE ALSO\ntool(7)\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "secret") {
		t.Errorf("the page shows a hidden command:\n%s", page)
	}
	for _, l := range strings.Split(page, "\n") {
		for _, r := range l {
			if r > 0x7e {
				t.Errorf("a character beyond ASCII in %q", l)
			}
		}
	}
}

// TestGroffAccepts renders the page with groff's warnings on, as lintian
// does: none.
func TestGroffAccepts(t *testing.T) {
	groff := tstest.Tool(t, "groff")
	cmd := exec.Command(groff, "-man", "-ww", "-z")
	cmd.Stdin = strings.NewReader(render(t))
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww: %v\n%s", err, out)
	}
}
