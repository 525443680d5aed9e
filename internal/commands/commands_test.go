//go:build !windows

package commands

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/ops/opstest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// env is a registry with the file and command operations over a real
// workdir, a real capture store and a real audit log.
type env struct {
	t    testing.TB
	base string
	root string
	reg  *ops.Registry
	svc  *Service
}

func newEnv(t testing.TB, o Options) *env {
	t.Helper()
	return newEnvStore(t, o, capture.Options{})
}

// newEnvStore is newEnv with capture store options (Dir is filled in).
func newEnvStore(t testing.TB, o Options, co capture.Options) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, base: base, root: filepath.Join(base, "root")}
	os.MkdirAll(filepath.Join(e.root, "sub"), 0o755)
	r, err := jail.Open(e.root, jail.Options{})
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: filepath.Join(base, "audit"), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	co.Dir = filepath.Join(base, "captures")
	store, err := capture.Open(co)
	if err != nil {
		t.Fatal(err)
	}
	if o.MaxConcurrent == 0 {
		o.MaxConcurrent = 4
	}
	if o.DefaultTimeout == 0 {
		o.DefaultTimeout = 30 * time.Second
	}
	if o.MaxTimeout == 0 {
		o.MaxTimeout = time.Minute
	}
	if o.InlineBytes == 0 {
		o.InlineBytes = 1024
	}
	// The commands run in the default sandbox, where it works.
	o.Sandbox.TmpRoot = filepath.Join(base, "sandbox")
	fs := files.NewService([]*files.Workdir{{Alias: "main", Root: r}}, files.Limits{
		MaxReadBytes: 1 << 20, MaxWriteBytes: 1 << 20, MaxListEntries: 100, MaxSearchMatches: 10, MaxSearchBytes: 1 << 20, MaxSearchFileBytes: 1 << 20,
	})
	e.svc = New(fs, store, o)
	e.reg = ops.New(ops.Options{Audit: log})
	files.Register(e.reg, fs)
	Register(e.reg, e.svc)
	t.Cleanup(func() {
		e.svc.Close()
		store.Close()
		log.Close()
		r.Close()
	})
	return e
}

func (e *env) call(op string, args map[string]any) (map[string]any, errcode.Code) {
	e.t.Helper()
	return e.callCtx(context.Background(), op, args)
}

func (e *env) callCtx(ctx context.Context, op string, args map[string]any) (map[string]any, errcode.Code) {
	e.t.Helper()
	return opstest.Call(ctx, e.reg, op, args)
}

func (e *env) ok(op string, args map[string]any) map[string]any {
	e.t.Helper()
	m, code := e.call(op, args)
	if code != "" {
		e.t.Fatalf("%s(%v): %s", op, args, code)
	}
	return m
}

func stream(m map[string]any, name string) map[string]any { return m[name].(map[string]any) }

func TestRunCommand(t *testing.T) {
	e := newEnv(t, Options{})
	tests := []struct {
		name   string
		args   map[string]any
		status string
		exit   float64
		stdout string
		stderr string
	}{
		{"argv", map[string]any{"argv": []string{"echo", "hello", "world"}}, "exited", 0, "hello world\n", ""},
		{"shell pipe", map[string]any{"command": "printf 'a\\nb\\n' | wc -l | tr -d ' '", "shell": "sh"}, "exited", 0, "2\n", ""},
		{"auto shell", map[string]any{"command": "echo $0 >/dev/null; echo ok"}, "exited", 0, "ok\n", ""},
		{"exit code", map[string]any{"command": "echo out; echo err >&2; exit 7", "shell": "sh"}, "exited", 7, "out\n", "err\n"},
		{"cwd", map[string]any{"argv": []string{"pwd"}, "cwd": "sub"}, "exited", 0, "", ""},
		{"stdin", map[string]any{"argv": []string{"cat"}, "stdin": "piped\n"}, "exited", 0, "piped\n", ""},
		{"env", map[string]any{"command": "echo $FOO", "shell": "sh", "env": map[string]string{"FOO": "bar"}}, "exited", 0, "bar\n", ""},
	}
	for _, tt := range tests {
		r := e.ok("run_command", tt.args)
		if r["status"] != tt.status || r["exit_code"] != tt.exit {
			t.Errorf("%s: status %v exit %v", tt.name, r["status"], r["exit_code"])
		}
		out := stream(r, "stdout")["head"].(string)
		if tt.name == "cwd" {
			if real, _ := filepath.EvalSymlinks(filepath.Join(e.root, "sub")); strings.TrimSpace(out) != real {
				t.Errorf("cwd: pwd printed %q", out)
			}
			continue
		}
		if out != tt.stdout || stream(r, "stderr")["head"] != tt.stderr {
			t.Errorf("%s: stdout %q stderr %q", tt.name, out, stream(r, "stderr")["head"])
		}
		if r["capture_id"] == "" || r["timed_out"] != false {
			t.Errorf("%s: receipt %v", tt.name, r)
		}
	}
}

func TestRunCommandRefusals(t *testing.T) {
	e := newEnv(t, Options{MaxTimeout: 10 * time.Second})
	tests := []struct {
		args map[string]any
		code errcode.Code
	}{
		{map[string]any{}, errcode.InvalidArgument},
		{map[string]any{"argv": []string{"true"}, "command": "true"}, errcode.InvalidArgument},
		{map[string]any{"argv": []string{""}}, errcode.InvalidArgument},
		{map[string]any{"argv": []string{"true"}, "timeout_seconds": 10.5}, errcode.InvalidArgument},
		{map[string]any{"argv": []string{"true"}, "timeout_seconds": -1}, errcode.InvalidArgument},
		{map[string]any{"argv": []string{"true"}, "cwd": "../"}, errcode.PathOutsideRoot},
		{map[string]any{"argv": []string{"true"}, "cwd": "/etc"}, errcode.PathOutsideRoot},
		{map[string]any{"argv": []string{"true"}, "cwd": "missing"}, errcode.PathNotFound},
		{map[string]any{"command": "true", "shell": "cmd"}, "SHELL_NOT_AVAILABLE"},
		{map[string]any{"command": "true", "shell": "powershell"}, "SHELL_NOT_AVAILABLE"},
		{map[string]any{"command": "true", "shell": "fish"}, errcode.InvalidArgument},
		{map[string]any{"argv": []string{"true"}, "env": map[string]string{"A=B": "x"}}, errcode.InvalidArgument},
		{map[string]any{"argv": []string{"/nonexistent/program"}}, "COMMAND_START_FAILED"},
	}
	for _, tt := range tests {
		if _, code := e.call("run_command", tt.args); code != tt.code {
			t.Errorf("run_command(%v) = %q, want %q", tt.args, code, tt.code)
		}
	}
	// At the maximum timeout is fine.
	e.ok("run_command", map[string]any{"argv": []string{"true"}, "timeout_seconds": 10})
	list := e.ok("list_commands", map[string]any{})
	if n := len(list["commands"].([]any)); n != 1 {
		t.Errorf("refused requests left %d captures, want only the one that ran", n)
	}
}

func TestTimeoutKillsTree(t *testing.T) {
	e := newEnv(t, Options{})
	pidFile := filepath.Join(e.root, "grandchild.pid") // inside the workdir: the sandbox lets the command write nowhere else
	start := time.Now()
	r := e.ok("run_command", map[string]any{
		"command":         "trap '' TERM; (trap '' TERM; echo $$ > " + pidFile + "; exec sleep 60) & sleep 60",
		"shell":           "sh",
		"timeout_seconds": 0.5,
	})
	if r["status"] != "timed_out" || r["timed_out"] != true || r["exit_code"] != -1.0 {
		t.Fatalf("receipt %v", r)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if alive(strings.TrimSpace(string(b))) {
		t.Fatal("the grandchild survived the timeout")
	}
}

func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	// A zombie is dead for our purposes.
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

func TestSecretsDoNotReachChildren(t *testing.T) {
	t.Setenv("HOSTLINK_TEST_SECRET", "s3cr3t-value")
	e := newEnv(t, Options{})
	r := e.ok("run_command", map[string]any{"argv": []string{"env"}})
	out := stream(r, "stdout")["head"].(string)
	if strings.Contains(out, "s3cr3t-value") || strings.Contains(out, "HOSTLINK_TEST_SECRET") {
		t.Fatal("hostlink's environment leaked into the child")
	}
	for _, want := range []string{"HOME=", "USERPROFILE=", "PATH=", "PYTHONIOENCODING=utf-8"} {
		if !strings.Contains(out, want) {
			t.Errorf("child env lacks %s", want)
		}
	}
}

func TestStartInputKill(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.ok("start_command", map[string]any{"argv": []string{"cat"}})
	id := s["capture_id"].(string)
	if s["status"] != "running" || s["pid"] == nil {
		t.Fatalf("start: %v", s)
	}
	if st := e.ok("command_status", map[string]any{"capture_id": id}); st["status"] != "running" {
		t.Fatalf("status %v", st)
	}
	e.ok("send_command_input", map[string]any{"capture_id": id, "data": "line one\n"})
	e.ok("send_command_input", map[string]any{"capture_id": id, "data": base64.StdEncoding.EncodeToString([]byte("two\n")), "encoding": "base64", "close": true})
	var st map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st = e.ok("command_status", map[string]any{"capture_id": id}); st["status"] != "running" {
			break
		}
	}
	if st["status"] != "exited" || stream(st, "stdout")["head"] != "line one\ntwo\n" {
		t.Fatalf("after closing stdin: %v", st)
	}
	if _, code := e.call("send_command_input", map[string]any{"capture_id": id, "data": "x"}); code != errcode.Conflict {
		t.Errorf("input to a finished command: %q", code)
	}

	s = e.ok("start_command", map[string]any{"command": "trap '' TERM; sleep 60", "shell": "sh"})
	id = s["capture_id"].(string)
	k := e.ok("kill_command", map[string]any{"capture_id": id, "grace_seconds": 0.2})
	if k["status"] != "killed" || k["exit_code"] != -1.0 {
		t.Fatalf("kill: %v", k)
	}
	if _, code := e.call("kill_command", map[string]any{"capture_id": id}); code != errcode.Conflict {
		t.Errorf("killing a finished command: %q", code)
	}
	if _, code := e.call("command_status", map[string]any{"capture_id": "cap_nope"}); code == "" {
		t.Error("status of an unknown capture succeeded")
	}
}

func TestConcurrencyLimit(t *testing.T) {
	e := newEnv(t, Options{MaxConcurrent: 1})
	s := e.ok("start_command", map[string]any{"argv": []string{"sleep", "30"}})
	if _, code := e.call("start_command", map[string]any{"argv": []string{"true"}}); code != errcode.Overloaded {
		t.Fatalf("second command at the limit: %q", code)
	}
	e.ok("kill_command", map[string]any{"capture_id": s["capture_id"]})
	e.ok("run_command", map[string]any{"argv": []string{"true"}})
}

func TestIdempotency(t *testing.T) {
	e := newEnv(t, Options{})
	marker := filepath.Join(e.root, "ran.txt")
	args := map[string]any{"command": "echo run >> " + marker, "shell": "sh", "idempotency_key": "k-1"}
	first := e.ok("run_command", args)
	second := e.ok("run_command", args)
	if second["capture_id"] != first["capture_id"] || second["reused"] != true {
		t.Fatalf("second run: %v", second)
	}
	if b, _ := os.ReadFile(marker); string(b) != "run\n" {
		t.Fatalf("the command ran again: %q", b)
	}
}

func TestChunkedOutputVerifies(t *testing.T) {
	e := newEnv(t, Options{InlineBytes: 100})
	r := e.ok("run_command", map[string]any{"command": "i=0; while [ $i -lt 5000 ]; do echo \"line $i ééé\"; i=$((i+1)); done", "shell": "sh"})
	so := stream(r, "stdout")
	if so["inline_omitted"].(float64) <= 0 || len(so["head"].(string)) > 50 || len(so["tail"].(string)) > 50 || r["output_truncated"] != true {
		t.Fatalf("inline view: %v", so)
	}
	if !strings.HasSuffix(so["tail"].(string), "line 4999 ééé\n") {
		t.Fatalf("tail %q", so["tail"])
	}
	id := r["capture_id"].(string)
	var all []byte
	var off int64
	var streamSum string
	for {
		ch := e.ok("read_command_output", map[string]any{"capture_id": id, "stream": "stdout", "offset": off, "length": 4096})
		data, _ := base64.StdEncoding.DecodeString(ch["content"].(string))
		sum := sha256.Sum256(data)
		if ch["sha256"] != hex.EncodeToString(sum[:]) {
			t.Fatal("chunk hash mismatch")
		}
		all = append(all, data...)
		off = int64(ch["next_offset"].(float64))
		if ch["complete"] == true && off == int64(ch["stream_length"].(float64)) {
			streamSum = ch["stream_sha256"].(string)
			break
		}
	}
	sum := sha256.Sum256(all)
	if hex.EncodeToString(sum[:]) != streamSum || so["sha256"] != streamSum || int64(len(all)) != int64(so["bytes"].(float64)) {
		t.Fatalf("reassembled %d bytes, hash %x; stream hash %s", len(all), sum, streamSum)
	}
	// Text chunks end on character boundaries.
	for off := int64(0); off < 200; off += 37 {
		ch, code := e.call("read_command_output", map[string]any{"capture_id": id, "stream": "stdout", "offset": off, "length": 13, "text": true})
		if code != "" {
			// An offset inside a character is refused, not mangled.
			if code != errcode.InvalidArgument {
				t.Errorf("text read at %d: %q", off, code)
			}
			continue
		}
		if !json.Valid([]byte(`"`+ch["content"].(string)+`"`)) && ch["content"] == "" {
			t.Errorf("text read at %d returned nothing", off)
		}
	}
	for _, n := range []int{65536, 65537} {
		_, code := e.call("read_command_output", map[string]any{"capture_id": id, "stream": "stdout", "length": n})
		if (n == 65536) != (code == "") {
			t.Errorf("length %d: %q", n, code)
		}
	}
}

func TestCancelledRunKillsCommand(t *testing.T) {
	e := newEnv(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, code := e.callCtx(ctx, "run_command", map[string]any{"argv": []string{"sleep", "60"}}); code != errcode.Cancelled {
		t.Fatalf("cancelled run: %q", code)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("cancellation did not end the command")
	}
	if n := len(e.svc.Running()); n != 0 {
		t.Fatalf("%d commands still running", n)
	}
}

// TestUnwritableStoreRefusesToStart: when the capture store cannot take a
// new capture, the command is not started and the error says so.
func TestUnwritableStoreRefusesToStart(t *testing.T) {
	e := newEnv(t, Options{})
	dir := filepath.Join(e.base, "captures")
	// Keep the database, but make the directory unable to hold a new
	// capture's files: a regular file stands where the store makes them.
	moved := dir + ".moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(e.root, "ran.txt")
	_, code := e.call("run_command", map[string]any{"command": "touch " + marker, "shell": "sh"})
	if code != capture.CodeUnavailable {
		t.Fatalf("run_command with an unwritable store: %q", code)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the command ran although its output could not be stored")
	}
	if n := len(e.svc.Running()); n != 0 {
		t.Fatalf("%d commands running", n)
	}
}

// TestArgvInsideShell: argv with a named shell is quoted for that shell and
// arrives exactly, through every POSIX shell installed here.
func TestArgvInsideShell(t *testing.T) {
	e := newEnv(t, Options{})
	argv := []string{"printf", "%s|", "a b", "it's", "$HOME", "=eq", "", "back\\slash", "ünï", "*"}
	want := "a b|it's|$HOME|=eq||back\\slash|ünï|*|"
	ran := 0
	for _, sh := range []string{"sh", "bash", "zsh"} {
		if _, err := exec.LookPath(sh); err != nil {
			if tstest.Required() {
				t.Errorf("%s is not installed (.ci/run installs it)", sh)
			}
			continue
		}
		r := e.ok("run_command", map[string]any{"argv": argv, "shell": sh})
		if got := stream(r, "stdout")["head"]; got != want || r["exit_code"] != 0.0 {
			t.Errorf("%s: %q (exit %v), want %q", sh, got, r["exit_code"], want)
		}
		ran++
	}
	if ran == 0 {
		t.Fatal("no POSIX shell found")
	}
	// auto with argv runs argv directly, as the wire protocol says.
	r := e.ok("run_command", map[string]any{"argv": []string{"printf", "%s", "$HOME"}, "shell": "auto"})
	if got := stream(r, "stdout")["head"]; got != "$HOME" {
		t.Errorf("auto: %q", got)
	}
}

// TestRefusedCwdIsAudited: a run_command refused for its cwd records the
// cwd it attempted, root-relative and marked as outside, never as an
// absolute host path (finding 12 of issue #16).
func TestRefusedCwdIsAudited(t *testing.T) {
	e := newEnv(t, Options{})
	for _, tt := range []struct {
		cwd, want string
		outside   bool
		code      errcode.Code
	}{
		{"../../etc", "../../etc", true, errcode.PathOutsideRoot},
		{filepath.Join(e.base, "elsewhere"), "../elsewhere", true, errcode.PathOutsideRoot},
		{"missing/dir", "missing/dir", false, errcode.PathNotFound},
	} {
		if _, code := e.call("run_command", map[string]any{"argv": []string{"true"}, "cwd": tt.cwd}); code != tt.code {
			t.Fatalf("cwd %q: %q, want %q", tt.cwd, code, tt.code)
		}
		lines, err := audit.Tail(filepath.Join(e.base, "audit"), 1)
		if err != nil || len(lines) != 1 {
			t.Fatalf("audit tail: %v, %d lines", err, len(lines))
		}
		l := lines[0]
		if l.Op != "run_command" || l.Code != string(tt.code) || l.Workdir != "main" ||
			len(l.Paths) != 1 || l.Paths[0] != tt.want || (l.Details["path_outside"] == true) != tt.outside {
			t.Errorf("cwd %q: record %+v; want path %q, outside %v", tt.cwd, l.Record, tt.want, tt.outside)
		}
	}
}
