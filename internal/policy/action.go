package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
)

// Describer is implemented by every operation's request type: Describe
// says what the request touches and how an approval shows it. It runs
// before the operation, so it must not act; it may resolve paths through
// dc.Locate.
type Describer interface {
	Describe(dc DescribeContext) (Action, error)
}

// DescribeContext is what a request can consult to describe itself.
type DescribeContext struct {
	Op    string // the operation's name
	Class Class  // the operation's class
	// locate and window come from the registry's hooks: see Hooks.
	hooks Hooks
	// transport is the caller's, for hooks that depend on it.
	transport audit.Transport
}

// Hooks let a request see what it would touch the way the operation
// itself will. A registry without workdirs or without a desktop leaves
// the corresponding hook nil.
type Hooks struct {
	// Locate resolves a workdir alias and a path: see files.Service.Locate.
	Locate func(workdir, path string) (Location, error)
	// Image is the marked image of the observation an act refers to: see
	// desktop.Service.ActImage.
	Image func(transport audit.Transport, observationID string, marks []approvals.Mark) (png []byte, w, h int, ok bool)
	// MeasureDir says what the directory a command or task would work in
	// is: see files.Service.MeasureDir.
	MeasureDir func(workdir, path string) (Extent, error)
	// Window describes the window an input would reach: see
	// desktop.Service.ActTarget.
	Window func(transport audit.Transport, observationID string, x, y *int, windowRef string) (string, error)
	// CommandTimeout is how long a command that asks for no timeout runs
	// at most ([commands] default_timeout_seconds); zero: unknown.
	CommandTimeout time.Duration
	// CommandSandbox returns the error (SANDBOX_FAILED) a command that
	// would run in the configured sandbox gets because the sandbox cannot
	// be set up here; nil when it can, or is configured off.
	CommandSandbox func() error
}

// Location is a path in a workdir, resolved the way the operations
// resolve it.
type Location struct {
	Workdir string // alias
	Dir     string // the workdir's canonical directory
	Rel     string // root-relative path, '/'-separated, as the request names it
	// Real is Rel with every symlink inside the workdir resolved: the
	// object the operation would reach. "" when it could not be resolved.
	Real string
}

// HostPath is the location as an absolute path on this host.
func (l Location) HostPath() string {
	if l.Rel == "." || l.Rel == "" {
		return l.Dir
	}
	return filepath.Join(l.Dir, filepath.FromSlash(l.Rel))
}

// Resolved is where the location's links lead, as a host path, when that
// is another place than HostPath (and known): what a command or task
// working there is shown besides the path it names.
func (l Location) Resolved() (string, bool) {
	if l.Real == "" || l.Real == l.Rel {
		return "", false
	}
	return Location{Dir: l.Dir, Rel: l.Real}.HostPath(), true
}

// Locate resolves workdir and path (see Hooks.Locate). ok is false when
// this registry has no workdirs to resolve in: the action then touches
// nothing the policy can place.
func (dc DescribeContext) Locate(workdir, path string) (loc Location, ok bool, err error) {
	if dc.hooks.Locate == nil {
		return Location{}, false, nil
	}
	if path == "" {
		path = "."
	}
	loc, err = dc.hooks.Locate(workdir, path)
	return loc, err == nil, err
}

// ActImage is the image of the observation an act refers to with marks
// drawn on it, as PNG; ok is false without a desktop or when the image is
// no longer kept.
func (dc DescribeContext) ActImage(observationID string, marks []approvals.Mark) (png []byte, w, h int, ok bool) {
	if dc.hooks.Image == nil {
		return nil, 0, 0, false
	}
	return dc.hooks.Image(dc.transport, observationID, marks)
}

// Extent is what is at a path, as an operation would find it. An approval
// binds it (see Action.State).
type Extent struct {
	Exists  bool
	Kind    string // "file", "directory", "symlink", "special file"
	Entries int    // a directory's entries, the whole tree below it
	Bytes   int64  // a file's (or symlink's) size, or a tree's regular files' sizes
	Partial bool   // the tree was larger than was counted
	// What identifies it besides what String says:
	Path     string // root-relative, every link on the way resolved; "" when not measured
	Dir      string // identity of the directory holding it; "" when there is none
	ID       string // its identity (device and inode; volume and file index)
	Revision string // a regular file's revision, as read_file reports it
	Tree     string // a directory's digest: each entry counted, in walk order
}

// String says what the extent is, for an approval's fields.
func (e Extent) String() string {
	switch {
	case !e.Exists:
		return "nothing there"
	case e.Kind != "directory":
		return fmt.Sprintf("%s, %d bytes", e.Kind, e.Bytes)
	case e.Partial:
		return fmt.Sprintf("directory with more than %d entries (at least %d bytes)", e.Entries, e.Bytes)
	}
	return fmt.Sprintf("directory with %d entries below it, %d bytes in files", e.Entries, e.Bytes)
}

// MeasureDir says what the directory at workdir and path is, for a
// command or task that would work in it (following links, without its
// contents); ok is false without workdirs.
func (dc DescribeContext) MeasureDir(workdir, path string) (ext Extent, ok bool, err error) {
	if dc.hooks.MeasureDir == nil {
		return Extent{}, false, nil
	}
	if path == "" {
		path = "."
	}
	ext, err = dc.hooks.MeasureDir(workdir, path)
	return ext, err == nil, err
}

// Window describes the window an input at (x, y) of an observation, or
// the window a reference names, would reach; "unknown" without a desktop.
// An observation the act could not use (unknown, used, expired) is the
// error the act would return.
func (dc DescribeContext) Window(observationID string, x, y *int, windowRef string) (string, error) {
	if dc.hooks.Window == nil {
		return "unknown", nil
	}
	return dc.hooks.Window(dc.transport, observationID, x, y, windowRef)
}

// CommandTimeout is how long a command that asks for no timeout runs at
// most, or zero when the registry does not say.
func (dc DescribeContext) CommandTimeout() time.Duration { return dc.hooks.CommandTimeout }

// CommandSandboxFailed is the error a command that would run in the
// configured sandbox gets, because it cannot be set up here: nil when it
// can, is configured off, or the registry does not say.
func (dc DescribeContext) CommandSandboxFailed() error {
	if dc.hooks.CommandSandbox == nil {
		return nil
	}
	return dc.hooks.CommandSandbox()
}

// Action is a request as the policy judges it and the user is shown it.
type Action struct {
	Summary string            // one line, safe for the audit log: no contents
	Fields  []approvals.Field // what an approval shows, in order
	// Touches are the workdir locations the request acts on, the first
	// being the action's workdir, each with the classes it needs.
	Touches []Touch
	// CommandLine is a command's line as allow_commands matches it; set
	// only by commands. HasEnv says the command sets environment
	// variables, which an allow rule never covers.
	CommandLine string
	HasEnv      bool
	// Argv is an argv command's argv, for argv-prefix grants.
	Argv []string
	// Diff is the unified diff of what a file action writes (see
	// approvals.Action.Diff).
	Diff string
	// Image and PNG are the marked observation an input act refers to.
	Image *approvals.Image
	PNG   []byte
	// Class, if set, is the class this request falls in instead of its
	// operation's (a command that lowers its sandbox is
	// commands_unsandboxed): every touch needs it, and an approval shows it.
	Class Class
	// NoRule: no allow rule covers this action, whatever it matches.
	NoRule bool
	// Refuse is the error the operation would fail with anyway (an edit
	// whose text is missing, an act on a used observation): where the
	// mode asks, it is answered at once instead of asking. Under deny the
	// denial is answered, which reveals nothing about the target.
	Refuse error
	// Binding is what an approval binds besides the operation, the
	// transport and the directories touched; nil means the whole request.
	Binding any
	// State is what the action's targets are as it was described, by
	// role ("path", "src", "dst"; "cwd", the directory a command or an
	// agent task works in): an approval binds it, an approved call
	// runs only while it holds, and the operation compares it with what
	// it finds at the moment it acts (ops.Call.Shown).
	State map[string]Extent
}

// Bind records ext, what is at the target role names, in the state an
// approval binds; an extent that was not measured (no Path) is left out.
func (a *Action) Bind(role string, ext Extent) {
	if ext.Path == "" {
		return
	}
	if a.State == nil {
		a.State = make(map[string]Extent)
	}
	a.State[role] = ext
}

// Touch is one location an action acts on.
type Touch struct {
	Location
	// Classes are the classes acting there needs; none means the
	// operation's own class.
	Classes []Class
}

// Add appends a field the approval shows; an empty value is left out.
func (a *Action) Add(label, value string) {
	if value != "" {
		a.Fields = append(a.Fields, approvals.Field{Label: label, Value: value})
	}
}

// Touch records that the action acts on loc, needing classes (none: the
// operation's class), and returns loc's host path for the fields.
func (a *Action) Touch(loc Location, classes ...Class) string {
	a.Touches = append(a.Touches, Touch{Location: loc, Classes: classes})
	return loc.HostPath()
}

// Requires adds classes to every location already touched: what the
// request reveals or changes there beyond its operation's class.
func (a *Action) Requires(classes ...Class) {
	for i := range a.Touches {
		for _, c := range classes {
			if !slices.Contains(a.Touches[i].Classes, c) {
				a.Touches[i].Classes = append(a.Touches[i].Classes, c)
			}
		}
	}
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// CommandLine is a command request's line as an approval shows it and an
// allow rule matches it: command as given, or argv joined with spaces,
// each argument that is not plain single-quoted.
func CommandLine(command string, argv []string) string {
	if command != "" {
		return command
	}
	parts := make([]string, 0, len(argv))
	for _, s := range argv {
		if !plainArg.MatchString(s) {
			s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// EnvNames returns the sorted names of an environment, for the fields
// (never the values).
func EnvNames(env map[string]string) string {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Preview shows the start of content as text, or says it is binary.
func Preview(content []byte, n int) string {
	if !utf8.Valid(content) {
		return "(binary)"
	}
	return textsafe.Clip(string(content), n)
}

// ShortHash is the first 16 hex digits of content's SHA-256.
func ShortHash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:8])
}

// Compact is v as one line of JSON.
func Compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ArgsFields shows every argument of in as JSON, in key order, and returns
// them as one short line for a summary (texts shown by size only, since
// the summary goes to the audit log). It is the description of requests
// with nothing to resolve.
func ArgsFields(a *Action, in any) string {
	var args map[string]any
	json.Unmarshal([]byte(Compact(in)), &args)
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var line []string
	for _, k := range keys {
		v := Compact(args[k])
		a.Add(k, textsafe.Clip(v, 4096))
		switch k {
		case "text", "content", "data", "prompt", "message", "stdin":
			line = append(line, k+"=("+strconv.Itoa(len(v))+" bytes)")
		default:
			line = append(line, k+"="+textsafe.Clip(v, 60))
		}
	}
	return strings.Join(line, " ")
}
