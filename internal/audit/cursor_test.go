package audit

import (
	"testing"
)

// TestCursor: a cursor reads every record once, in order, across
// rotations, while records are being appended, and resumes from a
// sequence number as an exporter does after a restart.
func TestCursor(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, 4<<10) // rotates every few records
	c := NewCursor(dir, 0)
	var got []uint64
	read := func() {
		for {
			lines, err := c.Next(7)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) == 0 {
				return
			}
			for _, l := range lines {
				got = append(got, l.Seq)
			}
		}
	}
	for i := 0; i < 300; i++ {
		if err := l.Append(record(i)); err != nil {
			t.Fatal(err)
		}
		if i%13 == 0 {
			read()
		}
	}
	read()
	if len(got) != 300 {
		t.Fatalf("read %d records, want 300", len(got))
	}
	for i, s := range got {
		if s != uint64(i+1) {
			t.Fatalf("record %d has seq %d", i, s)
		}
	}
	names, _ := logFiles(dir)
	if len(names) < 5 {
		t.Fatalf("only %d files: the test did not rotate", len(names))
	}
	// Resumed after seq 123, as after a restart.
	c = NewCursor(dir, 123)
	lines, err := c.Next(1000)
	if err != nil || len(lines) != 177 || lines[0].Seq != 124 || lines[176].Seq != 300 {
		t.Fatalf("resumed: %d lines, err %v", len(lines), err)
	}
	if _, err := parseLine(lines[0].Line); err != nil {
		t.Fatal(err)
	}
}
