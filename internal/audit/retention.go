package audit

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/private"
)

// CheckpointOp is the operation of the record retention writes before it
// removes files.
const CheckpointOp = "audit_checkpoint"

// Removed names a file retention removed, by its last record: the chain
// that is left continues from LastSeq and LastMAC.
type Removed struct {
	File    string `json:"file"`
	LastSeq uint64 `json:"last_seq"`
	LastMAC string `json:"last_mac"`
}

// pruneLocked, called with audit.lock held right after a rotation (l.f is
// the new, empty audit.log), removes the oldest rotated files while the
// directory holds more than maxTotal bytes, never the newest rotated file
// (another Log may be following it). It first appends, and syncs, one
// checkpoint record listing each file to go with its last record, so
// that Verify can tell retention from deletion; then it removes them,
// oldest first. A file whose last record does not verify stops it: that
// file stays for Verify to report.
func (l *Log) pruneLocked() error {
	if l.maxTotal <= 0 {
		return nil
	}
	rot, err := listRotated(l.dir)
	if err != nil {
		return err
	}
	sizes := make([]int64, len(rot))
	total := l.end
	for i, r := range rot {
		if fi, err := os.Lstat(filepath.Join(l.dir, r.String())); err == nil {
			sizes[i] = fi.Size()
			total += fi.Size()
		}
	}
	var remove []Removed
	for i := 0; i < len(rot)-1 && total > l.maxTotal; i++ {
		last, mac, err := l.lastOf(rot[i].String())
		if err != nil {
			break
		}
		remove = append(remove, Removed{File: rot[i].String(), LastSeq: last.Seq, LastMAC: mac})
		total -= sizes[i]
	}
	if len(remove) == 0 {
		return nil
	}
	details, err := canonicalDetails(map[string]any{"reason": "max_total_bytes", "max_total_bytes": l.maxTotal, "removed": remove})
	if err != nil {
		return err
	}
	e := entry{Code: "OK", Details: details, MachineID: l.machineID, Op: CheckpointOp, Paths: []string{},
		Transport: "internal", TS: time.Now().UTC().Format(tsLayout), Version: l.version}
	if err := l.appendLocked(e, false); err != nil {
		return err
	}
	for _, r := range remove {
		// A file that cannot be removed now is tried again at the next
		// rotation; the checkpoint covers it either way.
		os.Remove(filepath.Join(l.dir, r.File))
	}
	return syncDir(l.dir)
}

// lastOf returns the last record of the rotated file name.
func (l *Log) lastOf(name string) (*entry, string, error) {
	f, err := private.OpenShared(filepath.Join(l.dir, name))
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if fi.Size() == 0 {
		return nil, "", errors.New("empty file")
	}
	return l.lastRecord(f, name, fi.Size())
}

// checkpoints collects what checkpoint records say retention removed.
type checkpoints struct {
	last  map[uint64]string // the last record of each file removed: seq → MAC
	files map[string]bool   // the names of the files removed
}

func newCheckpoints() *checkpoints {
	return &checkpoints{last: map[uint64]string{}, files: map[string]bool{}}
}

func (c *checkpoints) add(e *entry) {
	if e.Op != CheckpointOp {
		return
	}
	var d struct {
		Removed []Removed `json:"removed"`
	}
	if json.Unmarshal(e.Details, &d) != nil {
		return
	}
	for _, r := range d.Removed {
		c.last[r.LastSeq] = r.LastMAC
		c.files[r.File] = true
	}
}

// covers reports whether a checkpoint accounts for every record before a
// chain that starts with e: e follows the last record of a removed file.
func (c *checkpoints) covers(e *entry) bool {
	mac, ok := c.last[e.Seq-1]
	return ok && e.Seq > 1 && mac == e.PrevMAC
}

// scanCheckpoints reads the checkpoints in the log files names of dir: a
// checkpoint is the first record of the file its rotation started, so
// only first records are read. A first record that does not verify is
// left for Verify to report.
func scanCheckpoints(dir string, key []byte, names []string) *checkpoints {
	cps := newCheckpoints()
	for _, name := range names {
		if e, err := firstRecord(dir, key, name); err == nil && e != nil {
			cps.add(e)
		}
	}
	return cps
}

// skipRemoved returns names without the oldest ones that retention
// removed but that are still there: on Windows a file stays, pending
// deletion, while another process has it open, and a removal that failed
// is tried again at the next rotation.
func (c *checkpoints) skipRemoved(names []string) []string {
	for len(names) > 0 && c.files[names[0]] {
		names = names[1:]
	}
	return names
}

// followPruned handles finding the file the Log had open removed while it
// was idle: that is retention's doing if a checkpoint in the files left
// accounts for every record before them and the Log's head was among
// those. The Log then follows the files left, as Open would.
func (l *Log) followPruned(rot []rotated, onDisk fs.FileInfo) error {
	names := append(rotatedNames(rot), logName)
	cps := scanCheckpoints(l.dir, l.key, names)
	var first *entry
	for _, name := range cps.skipRemoved(names) {
		e, err := firstRecord(l.dir, l.key, name)
		if err != nil {
			return err
		}
		if e != nil {
			first = e
			break
		}
	}
	if first == nil || !cps.covers(first) || l.seq > first.Seq-1 {
		return l.replaced("it is gone, and no checkpoint accounts for it")
	}
	l.seq, l.prevMAC = first.Seq-1, first.PrevMAC
	keep := cps.skipRemoved(names)
	for _, name := range keep[:len(keep)-1] { // audit.log is opened below
		if err := l.followFile(name); err != nil {
			return err
		}
	}
	return l.reopenLocked(rot, onDisk)
}

func rotatedNames(rot []rotated) []string {
	names := make([]string, len(rot), len(rot)+1)
	for i, r := range rot {
		names[i] = r.String()
	}
	return names
}

// firstRecord returns the first record of the log file name in dir, nil
// if it is empty; it must verify with key.
func firstRecord(dir string, key []byte, name string) (*entry, error) {
	f, err := private.OpenShared(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil, err
	}
	line, _, ok, err := lineAt(f, 0, fi.Size())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &Failure{File: name, Line: 1, Reason: ReasonTruncated, Detail: "no newline"}
	}
	e, _, fail := verifyLine(key, line)
	if fail != nil {
		fail.File, fail.Line = name, 1
		return nil, fail
	}
	return e, nil
}
