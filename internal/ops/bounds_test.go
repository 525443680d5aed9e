package ops

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/opsapi"
	"github.com/hostlink/hostlink/internal/policy"
)

// blobArgs carries content (Put) or asks for some (Get), and a timeout.
type blobArgs struct {
	Put     string  `json:"put,omitempty"`
	Get     *int64  `json:"get,omitempty"`
	Timeout float64 `json:"timeout,omitempty"`
}

func (a *blobArgs) Bound(b Bounds) error {
	if n := int64(len(a.Put)); b.MaxContentBytes > 0 && n > b.MaxContentBytes {
		return opsapi.ContentTooLarge(n, b.MaxContentBytes)
	}
	if b.MaxTimeout > 0 && (a.Timeout == 0 || a.Timeout > b.MaxTimeout.Seconds()) {
		a.Timeout = b.MaxTimeout.Seconds()
	}
	return nil
}

type blobResult struct {
	Bytes   int64   `json:"bytes"`
	Timeout float64 `json:"timeout"`
}

func (r blobResult) ContentBytes() int64 { return r.Bytes }

// countingPolicy counts the calls it was asked to judge.
type countingPolicy struct{ n int }

func (p *countingPolicy) Allow(context.Context, *Call, *Op, any, any) error { p.n++; return nil }

// TestBounds: a connection's bounds are applied by the registry, on every
// transport, before the policy is asked (nothing that will be refused is
// put to the user) and to results, at and past the limit.
func TestBounds(t *testing.T) {
	pol := &countingPolicy{}
	r, _, dir, _ := newRegistry(t, pol)
	handled := 0
	Register(r, Spec{Name: "blob", Title: "Blob", Description: "moves content", Class: policy.FilesWrite, Transports: AllTransports},
		func(ctx context.Context, c *Call, a blobArgs) (blobResult, error) {
			handled++
			n := int64(len(a.Put))
			if a.Get != nil {
				n = *a.Get
			}
			return blobResult{Bytes: n, Timeout: a.Timeout}, nil
		})
	n := func(v int64) *int64 { return &v }
	bounds := Bounds{MaxContentBytes: 10, MaxTimeout: 30 * time.Second}
	tests := []struct {
		name        string
		bounds      Bounds
		in          blobArgs
		code        errcode.Code
		ran         bool // the policy was asked and the handler ran
		wantTimeout float64
	}{
		{"content at the limit", bounds, blobArgs{Put: strings.Repeat("x", 10)}, "", true, 30},
		{"content past the limit", bounds, blobArgs{Put: strings.Repeat("x", 11)}, errcode.FileTooLarge, false, 0},
		{"result at the limit", bounds, blobArgs{Get: n(10)}, "", true, 30},
		{"result past the limit", bounds, blobArgs{Get: n(11)}, errcode.FileTooLarge, true, 0},
		{"shorter timeout kept", bounds, blobArgs{Timeout: 5}, "", true, 5},
		{"timeout at the limit", bounds, blobArgs{Timeout: 30}, "", true, 30},
		{"longer timeout capped", bounds, blobArgs{Timeout: 31}, "", true, 30},
		{"no bounds", Bounds{}, blobArgs{Put: strings.Repeat("x", 11), Get: n(1 << 20)}, "", true, 0},
	}
	for _, tt := range tests {
		for _, tr := range []audit.Transport{audit.Link, audit.MCPStdio, audit.IPC} {
			pol.n, handled = 0, 0
			out, err := r.CallValue(context.Background(), Caller{Transport: tr, Bounds: tt.bounds}, "blob", tt.in, nil)
			if code := errcode.CodeOf(err); code != tt.code {
				t.Fatalf("%s over %s: code %q (%v), want %q", tt.name, tr, code, err, tt.code)
			}
			if ran := pol.n == 1 && handled == 1; ran != tt.ran {
				t.Errorf("%s over %s: policy asked %d, handler ran %d times", tt.name, tr, pol.n, handled)
			}
			if err == nil && out.(blobResult).Timeout != tt.wantTimeout {
				t.Errorf("%s over %s: timeout %v, want %v", tt.name, tr, out.(blobResult).Timeout, tt.wantTimeout)
			}
			want := "OK"
			if tt.code != "" {
				want = string(tt.code)
				if d := errcode.As(err).Details["max_content_bytes"]; d != int64(10) {
					t.Errorf("%s: details %v", tt.name, errcode.As(err).Details)
				}
			}
			if got := lastLine(t, dir); !strings.HasPrefix(got, "blob "+want+" "+string(tr)) {
				t.Errorf("%s over %s: audit line %q", tt.name, tr, got)
			}
		}
	}
}

// TestBoundsImages: each image of a result is held to the content bound.
func TestBoundsImages(t *testing.T) {
	r, _, _, _ := newRegistry(t, nil)
	Register(r, Spec{Name: "picture", Title: "Picture", Description: "returns an image", Class: policy.FilesRead, Transports: AllTransports, ReadOnly: true},
		func(ctx context.Context, c *Call, a echoArgs) (*withImages, error) {
			return &withImages{imgs: []Image{{MIMEType: "image/png", Data: make([]byte, a.Count)}}}, nil
		})
	for _, tt := range []struct {
		size int
		code errcode.Code
	}{{100, ""}, {101, errcode.FileTooLarge}} {
		_, err := r.CallValue(context.Background(), Caller{Transport: audit.Link, Bounds: Bounds{MaxContentBytes: 100}}, "picture", echoArgs{Name: "x", Count: tt.size}, nil)
		if code := errcode.CodeOf(err); code != tt.code {
			t.Errorf("an image of %d bytes: %q (%v), want %q", tt.size, code, err, tt.code)
		}
	}
}
