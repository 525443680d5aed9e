package docgen

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/hostlink/hostlink/internal/ops"
)

func TestSplice(t *testing.T) {
	doc := "intro\n" + BeginMarker("a") + "\nold\n" + endMarker("a") + "\nmiddle\n" + BeginMarker("b") + "\n" + endMarker("b") + "\nend\n"
	got, err := Splice(doc, map[string]string{"a": "new A\n", "b": "new B"})
	want := "intro\n" + BeginMarker("a") + "\n\nnew A\n\n" + endMarker("a") + "\nmiddle\n" + BeginMarker("b") + "\n\nnew B\n\n" + endMarker("b") + "\nend\n"
	if err != nil || got != want {
		t.Fatalf("Splice: %v\n%s", err, got)
	}
	// Splicing again changes nothing.
	if again, err := Splice(got, map[string]string{"a": "new A\n", "b": "new B"}); err != nil || again != got {
		t.Fatalf("a second splice: %v\n%s", err, again)
	}
	for name, parts := range map[string]map[string]string{
		"a part without a place": {"a": "x", "b": "y", "c": "z"},
		"a place without a part": {"a": "x"},
	} {
		if _, err := Splice(doc, parts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Splice(BeginMarker("a")+"\nno end\n", map[string]string{"a": "x"}); err == nil {
		t.Error("a part without its end marker: no error")
	}
}

func TestTools(t *testing.T) {
	list := []*ops.Op{
		{Spec: ops.Spec{Name: "read_file", Capability: ops.Files, Description: "Read a file.\n  Over MCP | text."}},
		{Spec: ops.Spec{Name: "run_command", Capability: ops.Shell, Description: "Run one."}},
		{Spec: ops.Spec{Name: "find_files", Capability: ops.Files, Description: "Glob (** for any depth)."}},
	}
	want := "| tool | what it does |\n|---|---|\n| `read_file` | Read a file. Over MCP \\| text. |\n| `find_files` | Glob (\\*\\* for any depth). |\n"
	if got := Tools(list, ops.Files); got != want {
		t.Fatalf("Tools:\n%s\nwant\n%s", got, want)
	}
}

func TestCommands(t *testing.T) {
	var cli struct {
		Verbose bool `help:"Say more."`
		Serve   struct {
			Listen string `help:"Address." placeholder:"ADDR"`
			Secret bool   `hidden:""`
		} `cmd:"" help:"Run it."`
		Get struct {
			ID  string `arg:"" help:"Which."`
			Out string `arg:"" optional:"" help:"Where."`
			N   int    `short:"n" default:"5" help:"How many."`
		} `cmd:"" help:"Get one."`
		Internal struct{} `cmd:"" hidden:"" help:"Not shown."`
	}
	k, err := kong.New(&cli, kong.Name("tool"))
	if err != nil {
		t.Fatal(err)
	}
	got := Commands(k.Model)
	for _, want := range []string{
		"| `tool` | Flags every command takes.<br>`--verbose`: Say more. |",
		"| `tool serve` | Run it.<br>`--listen=ADDR`: Address. |",
		"| `tool get ID [OUT]` | Get one.<br>`-n, --n=5`: How many. |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "internal") || strings.Contains(got, "secret") || strings.Contains(got, "--help") {
		t.Errorf("hidden commands or flags, or --help, shown:\n%s", got)
	}
}
