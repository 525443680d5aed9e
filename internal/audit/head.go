package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hostlink/hostlink/internal/private"
)

// The head file (Options.HeadPath) holds the seq and MAC of the newest
// record known to be on disk, with a tag: an HMAC of both under the log's
// key, so that only a holder of the key can set it, and a head cannot be
// made from a record's MAC copied out of the log. It is rewritten in place
// in one of two fixed slots, the other one than the newest head's, so that
// a write torn by a crash leaves the previous head readable.
const (
	headName  = "audit.head"
	headMagic = "hostlink-audit-head-1"
	headSlot  = 512 // bytes per slot; a slot is one disk sector
)

// head is a position in the chain: the record with this seq and MAC, or
// the start of the chain (seq 0, no MAC).
type head struct {
	Seq uint64
	MAC string
}

// tag is the head's HMAC, in a domain of its own: a record's MAC is never
// a valid tag.
func (h head) tag(key []byte) string {
	m := hmac.New(sha256.New, key)
	b := append([]byte(headMagic), 0)
	b = strconv.AppendUint(b, h.Seq, 10)
	b = append(append(b, 0), h.MAC...)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// slot renders h as one slot: a line, padded with NULs.
func (h head) slot(key []byte) []byte {
	mac := h.MAC
	if mac == "" {
		mac = "-"
	}
	b := make([]byte, 0, headSlot)
	b = append(append(b, headMagic...), ' ')
	b = strconv.AppendUint(b, h.Seq, 10)
	b = append(append(append(b, ' '), mac...), ' ')
	b = append(append(b, h.tag(key)...), '\n')
	return b[:headSlot]
}

// headState is what a head file's slots hold.
type headState int

const (
	headValid   headState = iota
	headEmpty             // no slot holds a head (a file created and never written)
	headDamaged           // a slot holds something that is not a head
	headForeign           // a slot holds a head whose tag does not verify: another key's, or altered
)

// parseSlot reads one slot.
func parseSlot(b []byte, key []byte) (head, headState) {
	if len(bytes.Trim(b, "\x00")) == 0 {
		return head{}, headEmpty
	}
	line, _, ok := bytes.Cut(b, []byte{'\n'})
	f := strings.Fields(string(line))
	if !ok || len(f) != 4 || f[0] != headMagic {
		return head{}, headDamaged
	}
	seq, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil || strconv.FormatUint(seq, 10) != f[1] {
		return head{}, headDamaged
	}
	h := head{Seq: seq, MAC: f[2]}
	if h.MAC == "-" {
		h.MAC = ""
	}
	if (h.MAC == "") != (seq == 0) {
		return head{}, headDamaged
	}
	if !hmac.Equal([]byte(f[3]), []byte(h.tag(key))) {
		return head{}, headForeign
	}
	return h, headValid
}

// readHead returns the newest valid head in r and the index of its slot.
// Without one, the state says what the slots hold instead (the worse of
// the two).
func readHead(r io.ReaderAt, key []byte) (h head, slot int, st headState, err error) {
	buf, err := readSlots(r, nil)
	if err != nil {
		return head{}, 0, 0, err
	}
	h, slot, st = parseHead(buf, key)
	return h, slot, st, nil
}

// readSlots reads both slots of r into buf (grown as needed).
func readSlots(r io.ReaderAt, buf []byte) ([]byte, error) {
	buf = slices.Grow(buf[:0], 2*headSlot)[:2*headSlot]
	n, err := r.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

// parseHead is readHead of the slots' bytes.
func parseHead(buf, key []byte) (h head, slot int, st headState) {
	st, slot = headEmpty, -1
	for i := range 2 {
		var b []byte
		if lo := i * headSlot; lo < len(buf) {
			b = buf[lo:min(lo+headSlot, len(buf))]
		}
		sh, sst := parseSlot(b, key)
		switch {
		case sst == headValid && (slot < 0 || sh.Seq > h.Seq):
			h, slot = sh, i
		case sst != headValid && st != headValid && sst > st:
			st = sst
		}
	}
	if slot >= 0 {
		return h, slot, headValid
	}
	return head{}, 0, st
}

// describe says what is wrong with a head file in state st, for errors and
// records.
func (st headState) describe() string {
	switch st {
	case headEmpty:
		return "it is empty"
	case headDamaged:
		return "it is damaged"
	case headForeign:
		return "it does not verify with this key: another machine's head, or altered"
	}
	return "it is valid"
}

// writeHeadLocked records h as the head, called with audit.lock held once
// the records up to h are on disk (synced): a head on disk is never ahead
// of the log, whatever crashes. It never moves the head back (another Log
// may have advanced it further), and it fails if the head file at
// headPath is no longer the one the Log opened: as for the log itself,
// that is tampering, and the error is sticky. The write is synced within
// SyncDelay (syncDeferred).
func (l *Log) writeHeadLocked(h head) error {
	// Removing it, or renaming another file onto it, unlinks the file
	// this Log holds. (On Windows neither can happen while it is open:
	// the handle does not share delete access.)
	if deleted(l.headFile) {
		return l.fail(fmt.Errorf("audit: head %s was removed or replaced while open", l.headPath))
	}
	// What another Log may have written since: unless the slots changed
	// since this Log last saw them, their head is known already.
	buf, err := readSlots(l.headFile, l.headBuf)
	if err != nil {
		return l.fail(fmt.Errorf("audit: head %s: %w", l.headPath, err))
	}
	l.headBuf = buf
	seen := &l.headSeen
	if !seen.known || !bytes.Equal(buf, seen.raw) {
		seen.cur, seen.slot, seen.st = parseHead(buf, l.key)
		seen.raw, seen.known = append(seen.raw[:0], buf...), true
	}
	if seen.st == headValid && seen.cur.Seq >= h.Seq {
		return nil
	}
	next := 0
	if seen.st == headValid {
		next = 1 - seen.slot
	}
	b := h.slot(l.key)
	if _, err := l.headFile.WriteAt(b, int64(next*headSlot)); err != nil {
		return l.fail(fmt.Errorf("audit: writing head %s: %w", l.headPath, err))
	}
	seen.raw = append(seen.raw[:0], buf...)
	if len(seen.raw) < (next+1)*headSlot {
		seen.raw = append(seen.raw, make([]byte, (next+1)*headSlot-len(seen.raw))...)
	}
	copy(seen.raw[next*headSlot:], b)
	seen.cur, seen.slot, seen.st = h, next, headValid
	l.headDue = true
	l.scheduleSync()
	return nil
}

// headSeen is the head file's slots as a Log last read or wrote them, and
// what they hold.
type headSeen struct {
	known bool
	raw   []byte
	cur   head
	slot  int
	st    headState
}

// headFailure is a Verify failure about the head file itself (Line -1).
func headFailure(path string, reason Reason, format string, args ...any) *Failure {
	return &Failure{File: filepath.Base(path), Line: -1, Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// readHeadFile reads the head file at path for Verify: os.ErrNotExist if
// there is none.
func readHeadFile(path string, key []byte) (head, headState, error) {
	f, err := private.OpenShared(path)
	if err != nil {
		return head{}, 0, err
	}
	defer f.Close()
	h, _, st, err := readHead(f, key)
	return h, st, err
}
