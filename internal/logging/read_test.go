package logging

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	tests := []struct {
		name    string
		content string
		n       int
		want    []string
	}{
		{"missing", "", 5, nil},
		{"fewer than n", "a\nb\n", 5, []string{"a\n", "b\n"}},
		{"exactly n", "a\nb\nc\n", 3, []string{"a\n", "b\n", "c\n"}},
		{"past n", "a\nb\nc\nd\n", 2, []string{"c\n", "d\n"}},
		{"a line still being written", "a\nb\npart", 5, []string{"a\n", "b\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(path)
			if tt.content != "" {
				os.WriteFile(path, []byte(tt.content), 0o600)
			}
			var got []string
			off, err := Tail(path, tt.n, func(l []byte) { got = append(got, string(l)) })
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("Tail = %q, %v; want %q", got, err, tt.want)
			}
			if want := int64(strings.LastIndex(tt.content, "\n") + 1); off != want {
				t.Fatalf("offset %d, want %d", off, want)
			}
		})
	}
}

// TestFollow: appended lines arrive whole, and following goes on across a
// rotation.
func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	os.WriteFile(path, []byte("old\n"), 0o600)
	off, _ := Tail(path, 0, func([]byte) {})
	lines := make(chan string, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, path, off, 5*time.Millisecond, func(l []byte) { lines <- string(l) }) }()
	next := func(want string) {
		t.Helper()
		select {
		case got := <-lines:
			if got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no line %q", want)
		}
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("one\ntw")
	next("one\n")
	f.WriteString("o\n")
	next("two\n")
	f.WriteString("last before rotation\n")
	f.Close()
	os.Rename(path, path+".1")
	os.WriteFile(path, []byte("after rotation\n"), 0o600)
	next("last before rotation\n")
	next("after rotation\n")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
