package completion

import (
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// command is one node of the command tree as the scripts need it.
type command struct {
	path     string // " agent reset": the names below the root, each after a space
	help     string
	children []*command
	flags    []flag   // its own and its parents'
	files    bool     // a positional argument names a file
	args     []string // the values of positional arguments with an enum
}

type flag struct {
	long, short string // without dashes; short may be ""
	help        string
	value       bool     // takes a value (the next word, or after =)
	enum        []string // the values it accepts, when kong knows them
	files       bool     // its value names a file or directory
}

// build converts the kong model, leaving out hidden commands and flags.
func build(app *kong.Application) *command {
	return buildNode(app.Node, "", nil)
}

func buildNode(n *kong.Node, path string, inherited []flag) *command {
	c := &command{path: path, help: oneLine(n.Help), flags: slices.Clone(inherited)}
	for _, f := range n.Flags {
		if f.Hidden {
			continue
		}
		fl := flag{long: f.Name, help: oneLine(f.Help), value: !f.IsBool() && !f.IsCounter(), files: isPath(f.Value)}
		if f.Short != 0 {
			fl.short = string(f.Short)
		}
		if f.Enum != "" {
			fl.enum = f.EnumSlice()
		}
		c.flags = append(c.flags, fl)
	}
	for _, p := range n.Positional {
		c.files = c.files || isPath(p)
		if p.Enum != "" {
			c.args = append(c.args, p.EnumSlice()...)
		}
	}
	for _, ch := range n.Children {
		if ch.Hidden || ch.Type != kong.CommandNode {
			continue
		}
		c.children = append(c.children, buildNode(ch, path+" "+ch.Name, c.flags))
	}
	return c
}

func isPath(v *kong.Value) bool {
	if v.Tag == nil {
		return false
	}
	switch v.Tag.Type {
	case "path", "existingfile", "existingdir", "filecontent":
		return true
	}
	return false
}

// walk visits c and every command below it, parents first.
func (c *command) walk(fn func(*command)) {
	fn(c)
	for _, ch := range c.children {
		ch.walk(fn)
	}
}

func (c *command) childNames() []string {
	names := make([]string, len(c.children))
	for i, ch := range c.children {
		names[i] = ch.path[strings.LastIndexByte(ch.path, ' ')+1:]
	}
	return names
}

// flagWords are the flags as typed: --long and -s.
func (c *command) flagWords(valueOnly bool) []string {
	var w []string
	for _, f := range c.flags {
		if valueOnly && !f.value {
			continue
		}
		w = append(w, "--"+f.long)
		if f.short != "" {
			w = append(w, "-"+f.short)
		}
	}
	return w
}

// oneLine is the first line of a help text, for one-line descriptions.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
