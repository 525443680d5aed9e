package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
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
	fmt.Fprintf(m, "%s\x00%d\x00%s", headMagic, h.Seq, h.MAC)
	return hex.EncodeToString(m.Sum(nil))
}

// slot renders h as one slot: a line, padded with NULs.
func (h head) slot(key []byte) []byte {
	mac := h.MAC
	if mac == "" {
		mac = "-"
	}
	b := make([]byte, headSlot)
	copy(b, fmt.Sprintf("%s %d %s %s\n", headMagic, h.Seq, mac, h.tag(key)))
	return b
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
	buf := make([]byte, 2*headSlot)
	n, err := r.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return head{}, 0, 0, err
	}
	buf = buf[:n]
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
		return h, slot, headValid, nil
	}
	return head{}, 0, st, nil
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
	// (On Windows the open file cannot be removed: it does not share
	// delete access.)
	same, err := sameFile(l.headFile, l.headPath)
	if err == nil && !same {
		err = errors.New("it was removed or replaced while open")
	}
	if errors.Is(err, fs.ErrNotExist) {
		err = errors.New("it was removed while open")
	}
	if err != nil {
		return l.fail(fmt.Errorf("audit: head %s: %w", l.headPath, err))
	}
	cur, slot, st, err := readHead(l.headFile, l.key)
	if err != nil {
		return l.fail(fmt.Errorf("audit: head %s: %w", l.headPath, err))
	}
	if st == headValid && cur.Seq >= h.Seq {
		return nil
	}
	next := 0
	if st == headValid {
		next = 1 - slot
	}
	if _, err := l.headFile.WriteAt(h.slot(l.key), int64(next*headSlot)); err != nil {
		return l.fail(fmt.Errorf("audit: writing head %s: %w", l.headPath, err))
	}
	l.headDue = true
	l.scheduleSync()
	return nil
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
