package agent

import (
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestEveryTransitionOutsideTheTableIsRefused drives a stored task into
// every state by allowed moves, then tries every other state from there:
// the store refuses exactly the moves the table does not list.
func TestEveryTransitionOutsideTheTableIsRefused(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	paths := pathsFromQueued()
	n := 0
	for _, from := range Statuses {
		path, ok := paths[from]
		if !ok {
			t.Fatalf("%s cannot be reached from queued", from)
		}
		for _, to := range Statuses {
			if to == from {
				continue
			}
			n++
			id := newTaskAt(t, s, n, path)
			_, _, err := s.Apply(id, time.Now(), Change{To: to})
			allowed := CanTransition(from, to)
			switch {
			case allowed && err != nil:
				t.Errorf("%s → %s is in the table but was refused: %v", from, to, err)
			case !allowed && errcode.CodeOf(err) != CodeInvalidState:
				t.Errorf("%s → %s is not in the table but gave %v", from, to, err)
			}
			got, _ := s.Get(id)
			if !allowed && got.Status != from {
				t.Errorf("a refused %s → %s left the task %s", from, to, got.Status)
			}
		}
	}
	for _, s := range Statuses {
		if s.Terminal() && len(transitions[s]) > 0 {
			t.Errorf("terminal %s has transitions", s)
		}
	}
}

// pathsFromQueued finds, for every state, a sequence of allowed moves
// from queued that reaches it.
func pathsFromQueued() map[Status][]Status {
	paths := map[Status][]Status{Queued: nil}
	queue := []Status{Queued}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range transitions[cur] {
			if _, seen := paths[next]; !seen {
				paths[next] = append(append([]Status{}, paths[cur]...), next)
				queue = append(queue, next)
			}
		}
	}
	return paths
}

func newTaskAt(t *testing.T, s *Store, n int, path []Status) string {
	t.Helper()
	id := newID("task_")
	_, _, err := s.Create(Task{ID: id, Created: time.Now(), Status: Queued, Runtime: "fake", Workdir: "a", Cwd: ".",
		Access: ReadOnly, RequestSHA256: "r", Manifest: []byte("{}"), ManifestSHA256: "m", PolicyFingerprint: "p", Owner: "o"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range path {
		if _, _, err := s.Apply(id, time.Now(), Change{To: st}); err != nil {
			t.Fatalf("path to %v: %v", path, err)
		}
	}
	return id
}

func TestManifestIsImmutable(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := newTaskAt(t, s, 0, nil)
	for _, col := range []string{"manifest", "manifest_sha256", "policy_fingerprint", "request_sha256"} {
		if _, err := s.db.Exec(`UPDATE tasks SET `+col+` = 'x' WHERE id = ?`, id); err == nil {
			t.Errorf("%s could be changed", col)
		}
	}
	got, _ := s.Get(id)
	if string(got.Manifest) != "{}" {
		t.Fatalf("manifest now %s", got.Manifest)
	}
}

func TestCanonicalJSON(t *testing.T) {
	a, _ := canonicalJSON(map[string]any{"b": 1, "a": []any{"<x>", 2.5}, "c": map[string]any{"z": true, "y": nil}})
	if string(a) != `{"a":["<x>",2.5],"b":1,"c":{"y":null,"z":true}}` {
		t.Fatalf("canonical JSON: %s", a)
	}
	m := Manifest{TaskID: "t", Policy: Policy{AgentMode: "read-only"}}
	c1, s1, _ := m.seal()
	m2 := m
	m2.Policy.AgentMode = "workspace-write"
	_, s2, _ := m2.seal()
	if s1 == s2 || m.PolicySHA256 == m2.PolicySHA256 || len(c1) == 0 {
		t.Fatal("a policy change does not change the fingerprint and hash")
	}
}

func TestRedaction(t *testing.T) {
	r := redactor{root: "/home/ada/work", alias: "work"}
	for in, want := range map[string]string{
		"edited /home/ada/work/src/main.go":     "edited work:src/main.go",
		"cd /home/ada/work && ls":               "cd work: && ls",
		"read /etc/passwd and /home/ada/.ssh/x": "read [host path] and [host path]",
		"and/or a/b":                            "and/or a/b",
		"see https://example.com/a/b":           "see https://example.com/a/b",
		`"/home/ada/work2/x"`:                   `"[host path]"`,
		"C:\\Users\\ada\\secret.txt":            "[host path]",
		"no paths here":                         "no paths here",
	} {
		if got := r.string(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
	v := r.value(map[string]any{"cmd": []any{"cat", "/etc/hosts"}, "n": 1.0})
	if v.(map[string]any)["cmd"].([]any)[1] != "[host path]" {
		t.Fatalf("nested: %v", v)
	}
}

func TestUTF8Boundary(t *testing.T) {
	b := []byte("aé✓") // a(1) é(2) ✓(3)
	for n, want := range map[int]int{0: 0, 1: 1, 2: 1, 3: 3, 4: 3, 5: 3, 6: 6, 9: 6} {
		if got := utf8Boundary(b, n); got != want {
			t.Errorf("utf8Boundary(%d) = %d, want %d", n, got, want)
		}
	}
}
