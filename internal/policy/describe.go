package policy

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/ops"
)

// Classify returns the class an operation belongs to and whether its
// actions are put to the user under ask. Operations that only look at
// work already approved (a command's status or output, a task's events),
// stop it, or list what exists are not asked about, but a class set to
// deny refuses them too.
func Classify(op *ops.Op) (class string, asks bool) {
	switch op.Capability {
	case "files":
		if op.Name == "list_workdirs" {
			return FilesRead, false
		}
		if op.ReadOnly {
			return FilesRead, true
		}
		return FilesWrite, true
	case "shell":
		switch op.Name {
		case "command_status", "list_commands", "read_command_output", "kill_command":
			return Commands, false
		}
		return Commands, !op.ReadOnly
	case "computer_use":
		switch {
		case op.Name == "computer_observe" || op.Name == "computer_clipboard_read":
			// What is on the screen or the clipboard.
			return ComputerObserve, true
		case op.ReadOnly:
			// Lists of desktops, windows, applications, permissions.
			return ComputerObserve, false
		}
		return Computer, true
	case "agents":
		switch op.Name {
		case "list_agent_runtimes", "list_agent_models", "get_agent_task", "read_agent_task_events",
			"read_agent_task_result", "cancel_agent_task":
			return Agents, false
		}
		return Agents, true
	}
	return op.Capability, !op.ReadOnly
}

// described is an action as the policy judges and shows it.
type described struct {
	approvals.Action
	workdirs    []string // aliases the action touches
	dirs        []string // their canonical directories
	rels        []string // workdir-relative paths a file operation acts on
	commandLine string   // a command's line, as shown
	hasEnv      bool     // the command sets environment variables
	unsandboxed bool     // the command asks for less than the sandbox
	// target replaces the observation in an input's binding: see
	// gate.Allow.
	target string
}

// describe resolves where an action acts and writes it out for the user:
// the command line with its directory and environment names, the file and
// operation, the input with its target window and coordinates, the agent
// task with its prompt and access mode.
func (g *gate) describe(op *ops.Op, class string, c *ops.Call, a map[string]any) (described, error) {
	var d described
	add := func(label, value string) {
		if value != "" {
			d.Fields = append(d.Fields, approvals.Field{Label: label, Value: value})
		}
	}
	locate := func(alias, p string) (string, error) {
		if g.h.Locate == nil {
			return "", nil
		}
		wd, dir, rel, err := g.h.Locate(alias, p)
		if err != nil {
			return "", err
		}
		if !slices.Contains(d.workdirs, wd) {
			d.workdirs = append(d.workdirs, wd)
			d.dirs = append(d.dirs, dir)
		}
		if d.Workdir == "" {
			d.Workdir, d.WorkdirPath = wd, dir
		}
		d.rels = append(d.rels, rel)
		return hostPath(dir, rel), nil
	}
	add("Operation", op.Name+" ("+op.Title+")")
	add("Requested by", c.Transport+" "+c.Peer)
	switch op.Capability {
	case "files":
		if op.Name == "list_workdirs" {
			d.Summary = op.Name
			break
		}
		if op.Name == "move" {
			src, err := locate(str(a, "workdir"), str(a, "src"))
			if err != nil {
				return d, err
			}
			dstWD := str(a, "dst_workdir")
			if dstWD == "" {
				dstWD = d.workdirs[0]
			}
			dst, err := locate(dstWD, str(a, "dst"))
			if err != nil {
				return d, err
			}
			add("From", src)
			add("To", dst)
			if b(a, "overwrite") {
				add("Overwrite", "yes: replaces what is at the destination")
			}
			d.Summary = fmt.Sprintf("move %s to %s", src, dst)
			break
		}
		p, err := locate(str(a, "workdir"), orDot(str(a, "path")))
		if err != nil {
			return d, err
		}
		add("Path", p)
		d.Summary = op.Name + " " + p
		switch op.Name {
		case "write_file":
			content := []byte(str(a, "content"))
			if str(a, "encoding") == "base64" {
				if dec, err := base64.StdEncoding.DecodeString(string(content)); err == nil {
					content = dec
				}
			}
			add("Mode", orDefault(str(a, "mode"), "create_or_overwrite"))
			add("Content", fmt.Sprintf("%d bytes, SHA-256 %s", len(content), shortHash(content)))
			add("Content (start)", preview(content, 2048))
			d.Summary += fmt.Sprintf(" (%d bytes)", len(content))
		case "edit_file":
			edits, _ := a["edits"].([]any)
			for i, e := range edits {
				m, _ := e.(map[string]any)
				add(fmt.Sprintf("Edit %d", i+1), fmt.Sprintf("replace %q with %q", clip(str(m, "old_text"), 400), clip(str(m, "new_text"), 400)))
			}
			if b(a, "dry_run") {
				add("Dry run", "yes: nothing is written")
			}
		case "delete":
			if b(a, "recursive") {
				add("Recursive", "yes: the whole tree below it")
				d.Summary += " (recursive)"
			}
		case "search_text":
			add("Query", str(a, "query"))
		case "find_files":
			add("Pattern", str(a, "pattern"))
		}
	case "shell":
		switch op.Name {
		case "run_command", "start_command":
			dir, err := locate(str(a, "workdir"), orDot(str(a, "cwd")))
			if err != nil {
				return d, err
			}
			d.commandLine = CommandLine(a)
			add("Command", d.commandLine)
			if str(a, "command") != "" {
				add("Shell", orDefault(str(a, "shell"), "auto"))
			}
			add("Directory", dir)
			env, _ := a["env"].(map[string]any)
			var names []string
			for k := range env {
				names = append(names, k)
			}
			slices.Sort(names)
			d.hasEnv = len(names) > 0
			add("Environment names", strings.Join(names, ", "))
			if s, ok := a["stdin"].(string); ok {
				add("Stdin", fmt.Sprintf("%d bytes: %s", len(s), preview([]byte(s), 512)))
			}
			if t, ok := a["timeout_seconds"].(float64); ok && t > 0 {
				add("Timeout", fmt.Sprintf("%gs", t))
			}
			d.Summary = fmt.Sprintf("%s: %s (in %s)", op.Name, clip(d.commandLine, 200), dir)
			switch Unsandboxed(a) {
			case "":
			case "network":
				d.unsandboxed = true
				add("Sandbox", "LOWERED: confined to the workdir, but WITH NETWORK ACCESS")
				d.Summary += " [sandbox lowered: network]"
			default:
				d.unsandboxed = true
				add("Sandbox", "OFF: runs UNSANDBOXED, with all of your permissions (it can read hostlink's token and your credentials)")
				d.Summary += " [unsandboxed]"
			}
		case "companion_run_command":
			// Runs on the companion's host: its directory is not a workdir.
			d.commandLine = CommandLine(a)
			add("Command", d.commandLine)
			add("On", "the companion's host: "+orDefault(str(a, "companion"), "the connected companion"))
			dir := orDefault(str(a, "cwd"), "the companion user's home")
			add("Directory", dir)
			env, _ := a["env"].(map[string]any)
			var names []string
			for k := range env {
				names = append(names, k)
			}
			slices.Sort(names)
			d.hasEnv = len(names) > 0
			add("Environment names", strings.Join(names, ", "))
			d.Summary = fmt.Sprintf("%s: %s (in %s on the companion's host)", op.Name, clip(d.commandLine, 200), dir)
		default:
			add("Capture", str(a, "capture_id"))
			data := []byte(str(a, "data"))
			if str(a, "encoding") == "base64" {
				data, _ = base64.StdEncoding.DecodeString(string(data))
			}
			add("Input", fmt.Sprintf("%d bytes: %s", len(data), preview(data, 512)))
			if b(a, "close") {
				add("Close stdin", "yes")
			}
			d.Summary = fmt.Sprintf("%s to %s (%d bytes)", op.Name, str(a, "capture_id"), len(data))
		}
	case "computer_use":
		d.Summary = op.Name
		if op.Name == "computer_act" {
			action := str(a, "action")
			x, y := intp(a, "x"), intp(a, "y")
			target := "unknown"
			if g.h.ActTarget != nil {
				target = g.h.ActTarget(c.Transport, str(a, "observation_id"), x, y, str(a, "window_ref"))
			}
			d.target = target
			add("Action", action)
			add("Target", target)
			where := ""
			if x != nil && y != nil {
				where = fmt.Sprintf("(%d, %d) in image coordinates", *x, *y)
				add("At", where)
			}
			if p, ok := a["path"].([]any); ok {
				add("Drag path", compact(p))
			}
			add("Button", str(a, "button"))
			if n, ok := a["count"].(float64); ok && n > 0 {
				add("Clicks", fmt.Sprint(n))
			}
			if dx, dy := a["dx"], a["dy"]; dx != nil || dy != nil {
				add("Scroll", fmt.Sprintf("dx %v, dy %v", orZero(dx), orZero(dy)))
			}
			if t := str(a, "text"); t != "" {
				add("Text to type", t)
			}
			add("Keys", str(a, "keys"))
			if m, ok := a["modifiers"].([]any); ok {
				add("Modifiers", compact(m))
			}
			add("Window", str(a, "window_ref"))
			add("Observation", str(a, "observation_id"))
			d.Summary = fmt.Sprintf("computer_act %s %s on %s", action, where, target)
			if t := str(a, "text"); t != "" {
				d.Summary += fmt.Sprintf(" (types %d characters)", utf8.RuneCountInString(t))
			}
		} else {
			add("Desktop", orDefault(str(a, "desktop"), "default"))
			d.Summary = op.Name + " " + genericFields(a, add)
		}
	case "agents":
		switch op.Name {
		case "submit_agent_task":
			alias := str(a, "workdir")
			dir, err := locate(alias, orDot(str(a, "cwd")))
			if err != nil {
				// The engine reports a bad workdir its own way.
				dir, d.Workdir = alias, alias
				d.workdirs = []string{alias}
			}
			access := orDefault(str(a, "access"), "read-only")
			add("Runtime", str(a, "runtime"))
			add("Model", orDefault(str(a, "model"), "runtime default"))
			add("Access", access)
			add("Directory", dir)
			add("Continues task", str(a, "continue_task_id"))
			add("Prompt", str(a, "prompt"))
			d.Summary = fmt.Sprintf("agent task on %s (%s) in %s, prompt %d bytes", str(a, "runtime"), access, dir, len(str(a, "prompt")))
		default:
			add("Task", str(a, "task_id"))
			add("Request", str(a, "request_id"))
			for _, k := range []string{"message", "text", "decision", "answers"} {
				if v, ok := a[k]; ok {
					add(k, clip(compact(v), 4096))
				}
			}
			d.Summary = fmt.Sprintf("%s for task %s", op.Name, str(a, "task_id"))
		}
	default:
		genericFields(a, add)
		d.Summary = op.Name
	}
	return d, nil
}

// genericFields shows every argument as JSON, in key order, and returns
// them in one short line.
func genericFields(a map[string]any, add func(label, value string)) string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var line []string
	for _, k := range keys {
		v := compact(a[k])
		add(k, clip(v, 4096))
		switch k {
		case "text", "content", "data", "prompt", "message", "stdin":
			// Shown to the user, but the summary goes to the audit log.
			line = append(line, fmt.Sprintf("%s=(%d bytes)", k, len(v)))
		default:
			line = append(line, k+"="+clip(v, 60))
		}
	}
	return strings.Join(line, " ")
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// CommandLine is a command request's line as an approval shows it and an
// allow rule matches it: command as given, or argv joined with spaces,
// each argument that is not plain single-quoted.
func CommandLine(a map[string]any) string {
	if s := str(a, "command"); s != "" {
		return s
	}
	argv, _ := a["argv"].([]any)
	parts := make([]string, 0, len(argv))
	for _, v := range argv {
		s, _ := v.(string)
		if !plainArg.MatchString(s) {
			s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func hostPath(dir, rel string) string {
	if rel == "." || rel == "" {
		return dir
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func b(m map[string]any, k string) bool {
	v, _ := m[k].(bool)
	return v
}

func intp(m map[string]any, k string) *int {
	f, ok := m[k].(float64)
	if !ok {
		return nil
	}
	n := int(f)
	return &n
}

func orDot(s string) string { return orDefault(s, ".") }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orZero(v any) any {
	if v == nil {
		return 0
	}
	return v
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// preview shows the start of content as text, or says it is binary.
func preview(content []byte, n int) string {
	if !utf8.Valid(content) {
		return "(binary)"
	}
	return clip(string(content), n)
}
