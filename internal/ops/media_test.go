package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

type withImages struct {
	N    int `json:"n"`
	imgs []Image
}

func (w *withImages) ResultImages() []Image { return w.imgs }

func TestCheckImages(t *testing.T) {
	img := func(n int) Image { return Image{MIMEType: "image/png", Data: make([]byte, n)} }
	tests := []struct {
		imgs []Image
		ok   bool
	}{
		{nil, true},
		{[]Image{img(MaxImageBytes)}, true},
		{[]Image{img(MaxImageBytes + 1)}, false},
		{[]Image{img(1), img(1), img(1), img(1)}, true},
		{[]Image{img(1), img(1), img(1), img(1), img(1)}, false},
	}
	for _, tt := range tests {
		err := CheckImages(&withImages{imgs: tt.imgs})
		if (err == nil) != tt.ok || (err != nil && errcode.CodeOf(err) != ImageTooLarge) {
			t.Errorf("%d images: %v", len(tt.imgs), err)
		}
	}
	if CheckImages(echoResult{}) != nil {
		t.Error("a result without images")
	}
}

// An oversized image is refused by the registry, for every transport, and
// the refusal is what the audit log records.
func TestRegistryRefusesOversizedImages(t *testing.T) {
	r, _, dir, _ := newRegistry(t, nil)
	Register(r, Spec{Name: "snap", Description: "snaps", Class: policy.ComputerObserve, Transports: AllTransports, ReadOnly: true}, func(ctx context.Context, c *Call, a struct{}) (*withImages, error) {
		return &withImages{imgs: []Image{{MIMEType: "image/png", Data: make([]byte, MaxImageBytes+1)}}}, nil
	})
	out, err := r.Call(context.Background(), Caller{Transport: audit.MCPStdio}, "snap", nil, nil)
	if errcode.CodeOf(err) != ImageTooLarge || out != nil {
		t.Fatalf("out %v err %v", out, err)
	}
	if got := lastLine(t, dir); !strings.HasPrefix(got, "snap IMAGE_TOO_LARGE") {
		t.Fatalf("audit %q", got)
	}
}
