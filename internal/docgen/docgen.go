// Package docgen writes the parts of README.md that the program itself
// defines, so that they cannot drift from it: the tool tables, from the
// operation registry, and the command-line reference, from the CLI's
// definition. A generated part stands between two HTML comments,
//
//	<!-- generated: NAME (go test ./cmd/hostlink -run TestREADME -update) -->
//	…
//	<!-- end generated: NAME -->
//
// and Splice replaces what is between them.
package docgen

import (
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/hostlink/hostlink/internal/ops"
)

// Tools is the table of the operations of capability c in list, in their
// order: each tool's name and its description, as MCP clients see them.
func Tools(list []*ops.Op, c ops.Capability) string {
	var of []*ops.Op
	for _, op := range list {
		if op.Capability == c {
			of = append(of, op)
		}
	}
	return Table(of)
}

// Table is the table of every operation in list, in their order, as
// Tools makes it: for a part that is not one capability's.
func Table(list []*ops.Op) string {
	var b strings.Builder
	b.WriteString("| tool | what it does |\n|---|---|\n")
	for _, op := range list {
		fmt.Fprintf(&b, "| `%s` | %s |\n", op.Name, cell(op.Description))
	}
	return b.String()
}

// Commands is the command-line reference: every command that is not
// hidden, with its arguments, what it does and its own flags (the global
// ones are listed first, on the program itself).
func Commands(app *kong.Application) string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	var walk func(n *kong.Node, path string)
	walk = func(n *kong.Node, path string) {
		if n.Hidden {
			return
		}
		if n.Type == kong.CommandNode || n.Type == kong.ApplicationNode {
			usage := path
			for _, p := range n.Positional {
				arg := strings.ToUpper(p.Name)
				if !p.Required {
					arg = "[" + arg + "]"
				}
				usage += " " + arg
			}
			text := cell(n.Help)
			if n.Type == kong.ApplicationNode {
				text = "Flags every command takes."
			}
			for _, f := range n.Flags {
				if f.Hidden || f.Name == "help" {
					continue
				}
				text += "<br>" + flagUsage(f) + ": " + cell(f.Help)
			}
			if n.Type == kong.ApplicationNode || len(n.Children) == 0 || n.DefaultCmd != nil || len(n.Flags) > 0 {
				fmt.Fprintf(&b, "| `%s` | %s |\n", usage, text)
			}
		}
		for _, ch := range n.Children {
			if ch.Type == kong.CommandNode {
				walk(ch, path+" "+ch.Name)
			}
		}
	}
	walk(app.Node, app.Name)
	return b.String()
}

// flagUsage is a flag as typed: `--name VALUE` (or `-s, --name`).
func flagUsage(f *kong.Flag) string {
	s := "--" + f.Name
	if !f.IsBool() && !f.IsCounter() {
		s += "=" + f.FormatPlaceHolder()
	}
	if f.Short != 0 {
		s = "-" + string(f.Short) + ", " + s
	}
	return "`" + s + "`"
}

// cell is text for a table cell: on one line, with the characters
// Markdown would take for a cell's end or emphasis escaped.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`).Replace(strings.Join(strings.Fields(s), " "))
}

// Splice replaces each generated part of doc with parts[name]. Every part
// must have its markers in doc, and every marked part a content.
func Splice(doc string, parts map[string]string) (string, error) {
	seen := map[string]bool{}
	var out strings.Builder
	rest := doc
	for {
		i := strings.Index(rest, beginPrefix)
		if i < 0 {
			break
		}
		eol := strings.Index(rest[i:], "-->")
		if eol < 0 {
			return "", fmt.Errorf("an unterminated %q", beginPrefix)
		}
		header := rest[i : i+eol+len("-->")]
		name, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSuffix(header, "-->"), beginPrefix)), " ")
		content, ok := parts[name]
		if !ok {
			return "", fmt.Errorf("README marks a generated part %q that nothing generates", name)
		}
		end := endMarker(name)
		j := strings.Index(rest, end)
		if j < i {
			return "", fmt.Errorf("no %q after the start of %q", end, name)
		}
		out.WriteString(rest[:i])
		out.WriteString(header + "\n\n" + strings.TrimRight(content, "\n") + "\n\n" + end)
		rest = rest[j+len(end):]
		seen[name] = true
	}
	out.WriteString(rest)
	for name := range parts {
		if !seen[name] {
			return "", fmt.Errorf("README has no place for the generated part %q (%s … %s)", name, BeginMarker(name), endMarker(name))
		}
	}
	return out.String(), nil
}

const beginPrefix = "<!-- generated: "

// BeginMarker starts a generated part in the README.
func BeginMarker(name string) string {
	return beginPrefix + name + " (go test ./cmd/hostlink -run TestREADME -update) -->"
}

func endMarker(name string) string { return "<!-- end generated: " + name + " -->" }
