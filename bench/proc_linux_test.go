package main

import (
	"os"
	"testing"
)

// Two processes of one binary: its text is mapped by both and counts once
// (the larger resident size), anonymous memory counts in each.
func TestAddSmapsCountsSharedFilePagesOnce(t *testing.T) {
	front := `00400000-01000000 r-xp 00000000 08:01 4242                       /usr/bin/hostlink
Size:              12288 kB
Rss:                8000 kB
VmFlags: rd ex mr mw me
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Rss:                3000 kB
`
	daemon := `00400000-01000000 r-xp 00000000 08:01 4242                       /usr/bin/hostlink
Rss:               10000 kB
01000000-01100000 r--p 00c00000 08:01 4242                       /usr/bin/hostlink
Rss:                 500 kB
7f1000000000-7f1000800000 rw-p 00000000 00:00 0                  [heap]
Rss:                9000 kB
`
	var anon int64
	files := map[string]int64{}
	addSmaps([]byte(front), &anon, files)
	addSmaps([]byte(daemon), &anon, files)
	if anon != 12000<<10 {
		t.Errorf("anonymous %d kB, want 12000", anon>>10)
	}
	var file int64
	for _, n := range files {
		file += n
	}
	if len(files) != 2 || file != 10500<<10 {
		t.Errorf("file-backed %d kB over %d ranges, want 10500 over 2", file>>10, len(files))
	}
}

func TestTreeRSSOfThisProcess(t *testing.T) {
	n, err := treeRSS(os.Getpid())
	if err != nil || n <= 0 {
		t.Fatalf("treeRSS = %d, %v", n, err)
	}
	if vm, err := procRSS(os.Getpid()); err != nil || n > vm*2 {
		t.Errorf("treeRSS %d against VmRSS %d (%v)", n, vm, err)
	}
}
