package ops

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/auditapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// shoutService is a test-only capability, added as docs/DESIGN.md's
// "Adding an operation" says: a request, a normalize step, a description
// and a handler of the service, in a group the service registers.
type shoutService struct {
	normalized, described, handled []shout
}

type shoutArgs struct {
	Path  string `json:"path"`
	Text  string `json:"text"`
	Times int    `json:"times,omitempty" min:"0" max:"5"`
}

// AuditTarget implements Targeted: the path asked for.
func (a shoutArgs) AuditTarget() auditapi.Target { return auditapi.Target{Paths: []string{a.Path}} }

// shout is shoutArgs normalized: the path placed, the text repeated.
type shout struct {
	at   auditapi.Target
	text string
}

func (s shout) AuditTarget() auditapi.Target { return s.at }

var shouts Group[*shoutService]

func init() {
	AddNormalized(&shouts, testSpec("shout"), (*shoutService).normalize, (*shoutService).describe, (*shoutService).handle)
}

func (s *shoutService) normalize(a shoutArgs) (shout, error) {
	n := shout{at: auditapi.Target{Workdir: "wd", Paths: []string{"placed/" + a.Path}}, text: strings.Repeat(strings.ToUpper(a.Text), max(a.Times, 1))}
	s.normalized = append(s.normalized, n)
	if strings.HasPrefix(a.Path, "..") {
		n.at = auditapi.Target{Workdir: "wd", Paths: []string{a.Path}, Outside: true}
		return n, errcode.New(errcode.PathOutsideRoot, "outside")
	}
	return n, nil
}

func (s *shoutService) describe(n shout, dc policy.DescribeContext) (policy.Action, error) {
	s.described = append(s.described, n)
	return policy.Action{Summary: dc.Op + " " + n.text}, nil
}

func (s *shoutService) handle(_ context.Context, _ *Call, n shout) (echoResult, error) {
	s.handled = append(s.handled, n)
	return echoResult{Greeting: n.text}, nil
}

// TestNormalizedOperation: an operation added with AddNormalized decodes
// and normalizes each request once; its description and its handler get
// that same normalized request; a normalize error refuses the call before
// the policy; and the audit record names what the normalized request
// touches, refused or not.
func TestNormalizedOperation(t *testing.T) {
	for _, tt := range []struct {
		name, args string
		mode       policy.Mode
		code       errcode.Code
		described  bool
		handled    bool
		paths      []string
		outside    bool
	}{
		{"allowed", `{"path":"a","text":"hi","times":2}`, policy.Allow, "OK", true, true, []string{"placed/a"}, false},
		{"denied", `{"path":"a","text":"hi"}`, policy.Deny, policy.CodeDenied, true, false, []string{"placed/a"}, false},
		{"refused as it normalizes", `{"path":"../x","text":"hi"}`, policy.Allow, errcode.PathOutsideRoot, false, false, []string{"../x"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			key := make([]byte, 32)
			rand.Read(key)
			log, err := audit.Open(audit.Options{Dir: dir, Key: key})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { log.Close() })
			// files_read asks, so that the policy judges (a policy that
			// allows everything describes nothing).
			e := policy.New(policy.Config{Default: policy.Rules{Modes: map[policy.Class]policy.Mode{policy.FilesWrite: tt.mode, policy.FilesRead: policy.Ask}}}, approvals.New(approvals.Options{}))
			r := New(Options{Audit: log, Policy: Gate(e, policy.Hooks{})})
			s := &shoutService{}
			shouts.Register(r, s)
			if op, _ := r.Lookup("shout"); !op.Describes {
				t.Fatal("an operation with a registered description does not describe itself")
			}
			out, err := r.Call(context.Background(), Caller{Transport: audit.MCPStdio}, "shout", []byte(tt.args), nil)
			if code := errcode.CodeOf(err); err != nil && code != tt.code || err == nil && tt.code != "OK" {
				t.Fatalf("err %v, want %s", err, tt.code)
			}
			if len(s.normalized) != 1 {
				t.Fatalf("normalized %d times, want once", len(s.normalized))
			}
			n := s.normalized[0]
			if got := len(s.described) == 1; got != tt.described || got && s.described[0].text != n.text {
				t.Errorf("described %v, want %v of what was normalized (%q)", s.described, tt.described, n.text)
			}
			if got := len(s.handled) == 1; got != tt.handled || got && (s.handled[0].text != n.text || out.(echoResult).Greeting != "HIHI") {
				t.Errorf("handled %v (%v), want %v of what was normalized", s.handled, out, tt.handled)
			}
			lines, err := audit.Tail(dir, 1)
			if err != nil || len(lines) != 1 {
				t.Fatalf("Tail: %v %v", lines, err)
			}
			l := lines[0]
			if l.Workdir != "wd" || !slices.Equal(l.Paths, tt.paths) || (l.Details["path_outside"] == true) != tt.outside || l.Details["requested_paths"] != nil {
				t.Errorf("audit record: workdir %q, paths %q, details %v; want wd, %q, path_outside %v", l.Workdir, l.Paths, l.Details, tt.paths, tt.outside)
			}
		})
	}
}

// TestNormalizeNeededForAnotherType: registering a request type the
// handler does not take, without a normalize step, is a programming error.
func TestNormalizeNeededForAnotherType(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	r := New(Options{})
	RegisterNormalized[shoutArgs, shout, echoResult](r, testSpec("bad"), nil, nil, func(context.Context, *Call, shout) (echoResult, error) { return echoResult{}, nil })
}
