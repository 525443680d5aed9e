package files

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/ops/opstest"
)

// testLimits are small so tests can reach them.
var testLimits = Limits{
	MaxReadBytes:       1 << 20,
	MaxWriteBytes:      1 << 20,
	MaxListEntries:     100,
	MaxSearchMatches:   50,
	MaxSearchBytes:     4 << 20,
	MaxSearchFileBytes: 1 << 20,
}

// env is a registry with the file operations over real temporary workdirs,
// audited to a real audit log.
type env struct {
	t     testing.TB
	base  string // holds root/, root2/, outside/
	root  string
	reg   *ops.Registry
	svc   *Service
	audit *audit.Log
	key   []byte
}

func newEnv(t testing.TB, limits Limits, extra ...extraWorkdir) *env {
	t.Helper()
	return newEnvWith(t, limits, jail.Options{}, extra...)
}

// newEnvWith is newEnv with the main workdir opened with opts. Every
// workdir protects hostlink-like directories (base/hl/config and
// base/hl/state, outside the workdirs) besides opts.Protected, as the
// daemon's workdirs do.
func newEnvWith(t testing.TB, limits Limits, opts jail.Options, extra ...extraWorkdir) *env {
	t.Helper()
	return newEnvSetup(t, limits, func(*env) jail.Options { return opts }, extra...)
}

// newEnvSetup is newEnvWith where setup prepares the directories before
// the workdirs are opened and returns the main workdir's options.
func newEnvSetup(t testing.TB, limits Limits, setup func(e *env) jail.Options, extra ...extraWorkdir) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, base: base, root: filepath.Join(base, "root")}
	for _, d := range []string{"root", "root2", "outside", "hl/config", "hl/state"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := setup(e)
	hl := []string{filepath.Join(base, "hl", "config"), filepath.Join(base, "hl", "state")}
	open := func(alias, dir string, ro bool) *Workdir {
		o := jail.Options{ReadOnly: ro, Protected: hl}
		if alias == "main" {
			o = opts
			o.ReadOnly = ro
			o.Protected = append(hl, opts.Protected...)
		}
		r, err := jail.Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return &Workdir{Alias: alias, Root: r}
	}
	wds := []*Workdir{open("main", e.root, false)}
	for _, c := range extra {
		dir := filepath.Join(base, c.dir)
		os.MkdirAll(dir, 0o755)
		wds = append(wds, open(c.alias, dir, c.readOnly))
	}
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: filepath.Join(base, "audit"), Key: key, MachineID: "test", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	e.audit, e.key = log, key
	e.reg = ops.New(ops.Options{Audit: log})
	e.svc = NewService(wds, limits)
	Register(e.reg, e.svc)
	return e
}

type extraWorkdir struct {
	alias, dir string
	readOnly   bool
}

// call runs op with args through the registry and returns the result as a
// generic map, and the error code ("" on success).
func (e *env) call(op string, args map[string]any) (map[string]any, errcode.Code) {
	e.t.Helper()
	return opstest.Call(context.Background(), e.reg, op, args)
}

// ok is call that must succeed.
func (e *env) ok(op string, args map[string]any) map[string]any {
	e.t.Helper()
	m, code := e.call(op, args)
	if code != "" {
		e.t.Fatalf("%s(%v) failed: %s", op, args, code)
	}
	return m
}

func (e *env) write(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.base, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(e.base, rel))
	return string(b), err == nil
}
