package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// dataset is the generated tree every server works on.
type dataset struct {
	Root      string // absolute, symlinks resolved
	Small     string // 4 KiB text file (relative to Root)
	Big       string // 10 MiB text file (relative)
	ListDir   string // directory with ListN entries (relative)
	ListN     int
	Tree      string // directory with TreeN files (relative)
	TreeN     int
	GlobExt   string // files matching *.GlobExt in Tree
	GlobN     int
	Needle    string // text present in NeedleN files of Tree
	NeedleN   int
	BigBytes  int
	WriteSize int
}

const needle = "hostlink_bench_needle_7f3a"

// lines returns n bytes of printable text in 64-byte lines.
func lines(n int, seed int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %08d seed %06d the quick brown fox jumps over the lazy dog.\n", i, seed)
	}
	return b.Bytes()[:n]
}

func generate(root string, listN, treeN, bigBytes int) (*dataset, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	d := &dataset{Root: real, Small: "small.txt", Big: "big.txt", ListDir: "list", ListN: listN,
		Tree: "tree", TreeN: treeN, GlobExt: "go", Needle: needle, BigBytes: bigBytes, WriteSize: 4096}
	if err := os.WriteFile(filepath.Join(real, d.Small), lines(4096, 1), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(real, d.Big), lines(bigBytes, 2), 0o644); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(real, "writes"), 0o755); err != nil {
		return nil, err
	}
	ld := filepath.Join(real, d.ListDir)
	if err := os.MkdirAll(ld, 0o755); err != nil {
		return nil, err
	}
	for i := 0; i < listN; i++ {
		if err := os.WriteFile(filepath.Join(ld, fmt.Sprintf("entry-%06d.txt", i)), []byte("x\n"), 0o644); err != nil {
			return nil, err
		}
	}
	// Tree: 100 files per leaf directory, 10 leaves per top directory.
	// Every 100th file is .go (the glob target); every 1000th holds the needle.
	body := lines(256, 3)
	withNeedle := append(append([]byte(nil), body...), []byte("here is the "+needle+" again\n")...)
	for i := 0; i < treeN; i++ {
		dir := filepath.Join(real, d.Tree, fmt.Sprintf("d%03d", i/1000), fmt.Sprintf("s%d", (i/100)%10))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		ext := "txt"
		if i%100 == 7 {
			ext = d.GlobExt
			d.GlobN++
		}
		content := body
		if i%1000 == 3 {
			content = withNeedle
			d.NeedleN++
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d.%s", i, ext)), content, 0o644); err != nil {
			return nil, err
		}
	}
	return d, nil
}
