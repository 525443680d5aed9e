package files

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/ops"
)

// The benchmarks compare an operation through the registry (jail, schema
// validation, audit record with fsync) with the bare os call it wraps.

func benchCall(b *testing.B, e *env, op string, args map[string]any) {
	raw, _ := json.Marshal(args)
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.reg.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio}, op, raw, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFile4K(b *testing.B) {
	e := newEnv(b, testLimits)
	e.write("root/f.txt", strings.Repeat("x", 4096))
	benchCall(b, e, "read_file", map[string]any{"path": "f.txt"})
}

func BenchmarkReadFile4KBareOS(b *testing.B) {
	p := filepath.Join(b.TempDir(), "f.txt")
	os.WriteFile(p, []byte(strings.Repeat("x", 4096)), 0o644)
	for b.Loop() {
		if _, err := os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteFile4K(b *testing.B) {
	e := newEnv(b, testLimits)
	benchCall(b, e, "write_file", map[string]any{"path": "f.txt", "content": strings.Repeat("x", 4096)})
}

// BenchmarkWriteFile4KBareOS is the same atomic write done by hand: temp
// file, write, fsync, rename.
func BenchmarkWriteFile4KBareOS(b *testing.B) {
	dir := b.TempDir()
	data := []byte(strings.Repeat("x", 4096))
	for b.Loop() {
		f, err := os.CreateTemp(dir, ".tmp")
		if err != nil {
			b.Fatal(err)
		}
		f.Write(data)
		f.Sync()
		f.Close()
		if err := os.Rename(f.Name(), filepath.Join(dir, "f.txt")); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStat(b *testing.B) {
	e := newEnv(b, testLimits)
	e.write("root/a/b/c/f.txt", "x")
	benchCall(b, e, "stat", map[string]any{"path": "a/b/c/f.txt"})
}

func BenchmarkSearchText1000Files(b *testing.B) {
	e := newEnv(b, testLimits)
	for i := range 1000 {
		e.write(filepath.Join("root", "d"+string(rune('a'+i%26)), strings.Repeat("f", 1+i%7)+"-"+itoa3(i)+".txt"),
			strings.Repeat("some ordinary line of text\n", 40))
	}
	benchCall(b, e, "search_text", map[string]any{"query": "needle"})
}

func itoa3(i int) string {
	return string([]byte{byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10)})
}

// bigDirEnv is an env whose workdir holds big, a directory of 10,000 files.
func bigDirEnv(b *testing.B) *env {
	lim := testLimits
	lim.MaxListEntries = 10000
	e := newEnv(b, lim)
	dir := filepath.Join(e.root, "big")
	os.Mkdir(dir, 0o755)
	for i := range 10000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), nil, 0o644)
	}
	return e
}

func BenchmarkListDirectory10k(b *testing.B) {
	benchCall(b, bigDirEnv(b), "list_directory", map[string]any{"path": "big", "max_entries": 10000})
}

// BenchmarkListDirectory10kDetails: with size and mtime, one lstat per
// entry (what every listing cost before details were asked for).
func BenchmarkListDirectory10kDetails(b *testing.B) {
	benchCall(b, bigDirEnv(b), "list_directory", map[string]any{"path": "big", "max_entries": 10000, "details": true})
}

// BenchmarkListDirectory10kPaged reads the whole directory in pages of
// 1,000 (the default page size): one op is ten calls, the directory read
// once.
func BenchmarkListDirectory10kPaged(b *testing.B) {
	e := bigDirEnv(b)
	caller := ops.Caller{Transport: audit.MCPStdio}
	for b.Loop() {
		cursor, pages := "", 0
		for {
			raw, _ := json.Marshal(map[string]any{"path": "big", "max_entries": 1000, "cursor": cursor})
			out, err := e.reg.Call(context.Background(), caller, "list_directory", raw, nil)
			if err != nil {
				b.Fatal(err)
			}
			pages++
			if cursor = out.(fileapi.ListDirectoryResult).NextCursor; cursor == "" {
				break
			}
		}
		if pages != 10 {
			b.Fatalf("%d pages", pages)
		}
	}
}

func BenchmarkListDirectory10kBareOS(b *testing.B) {
	dir := b.TempDir()
	for i := range 10000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), nil, 0o644)
	}
	for b.Loop() {
		ents, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range ents {
			if _, err := d.Info(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
