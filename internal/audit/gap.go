package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/private"
)

// GapOp is the operation of the record a Log appends when it opens a log
// that does not end where its head says: the chain never restarts
// silently. Verify reports every such record.
const GapOp = "audit_gap"

// Reasons of a GapOp record (details.reason).
const (
	// GapRecordsMissing: the log ended before the record its head names
	// (its newest records or files are gone, or it was emptied). The
	// chain continues from the head: the gap record's seq follows the
	// head's and its prev_mac is the head's MAC.
	GapRecordsMissing = "records_missing"
	// GapHeadMissing: the log had records but there was no head file.
	GapHeadMissing = "head_missing"
	// GapHeadInvalid: the head file held no head valid with this key.
	GapHeadInvalid = "head_invalid"
)

// gapDetails are a GapOp record's details. found_seq and found_mac are
// the last record the Log found on disk (0 and "" if none).
type gapDetails struct {
	Reason   string `json:"reason"`
	FoundSeq uint64 `json:"found_seq"`
	FoundMAC string `json:"found_mac"`
	Detail   string `json:"detail,omitempty"`
}

// openHeadLocked, called by Open with audit.lock held once the chain is
// resumed from the files, opens the head file and compares it with the
// end of the log: a new log gets its first head; a log that ends before
// its head, or has records but no valid head, gets a GapOp record saying
// so before anything else is appended.
func (l *Log) openHeadLocked() error {
	f, err := private.OpenFile(l.headPath, os.O_RDWR)
	missing := errors.Is(err, fs.ErrNotExist)
	if missing {
		if err = private.MkdirAll(filepath.Dir(l.headPath)); err == nil {
			f, err = private.OpenFile(l.headPath, os.O_RDWR|os.O_CREATE|os.O_EXCL)
		}
		if err == nil {
			err = syncDir(filepath.Dir(l.headPath))
		}
	}
	if f != nil {
		l.headFile = f
	}
	if err != nil {
		return fmt.Errorf("audit: head: %w", err)
	}
	h, _, st, err := readHead(f, l.key)
	if err != nil {
		return fmt.Errorf("audit: head %s: %w", l.headPath, err)
	}
	found := head{l.seq, l.prevMAC}
	switch {
	case found.Seq == 0 && (missing || st == headEmpty):
		// A new log. (One whose files and head were both deleted looks
		// the same: nothing outside them remembers it.)
		return l.writeHeadLocked(found)
	case missing:
		return l.appendGap(gapDetails{Reason: GapHeadMissing, FoundSeq: found.Seq, FoundMAC: found.MAC})
	case st != headValid:
		return l.appendGap(gapDetails{Reason: GapHeadInvalid, FoundSeq: found.Seq, FoundMAC: found.MAC, Detail: st.describe()})
	case h.Seq > found.Seq || (h.Seq == found.Seq && h.MAC != found.MAC):
		l.seq, l.prevMAC = h.Seq, h.MAC
		return l.appendGap(gapDetails{Reason: GapRecordsMissing, FoundSeq: found.Seq, FoundMAC: found.MAC})
	}
	// The log reaches the head, or goes past it: the head lags behind
	// records written just before a crash (Verify checks that it names
	// one of them). The next synced record moves it.
	return nil
}

// appendGap appends a GapOp record, synced, at the head of the chain.
func (l *Log) appendGap(g gapDetails) error {
	m := map[string]any{"reason": g.Reason, "found_seq": g.FoundSeq, "found_mac": g.FoundMAC}
	if g.Detail != "" {
		m["detail"] = g.Detail
	}
	details, err := canonicalDetails(m)
	if err != nil {
		return err
	}
	e := entry{Code: "OK", Details: details, MachineID: l.machineID, Op: GapOp, Paths: []string{},
		Transport: string(Internal), TS: time.Now().UTC().Format(tsLayout), Version: l.version}
	return l.appendLocked(e, false)
}

// gapOf returns e's details if e is a GapOp record.
func gapOf(e *entry) (gapDetails, bool) {
	var g gapDetails
	if e.Op != GapOp || json.Unmarshal(e.Details, &g) != nil {
		return g, false
	}
	return g, true
}

// bridges reports whether the gap record e, with details g, continues the
// chain c across records that went missing: it names c's last record as
// the last one found on disk.
func (g gapDetails) bridges(e *entry, c *chain) bool {
	return g.Reason == GapRecordsMissing && g.FoundSeq == c.seq && g.FoundMAC == c.mac && e.Seq > c.seq
}

// failure is what Verify reports for the gap record e, line n.
func (g gapDetails) failure(e *entry, n int) *Failure {
	f := &Failure{Line: n, Reason: ReasonHead}
	switch g.Reason {
	case GapRecordsMissing:
		f.Reason = ReasonCut
		if e.Seq-1 == g.FoundSeq {
			f.Detail = fmt.Sprintf("hostlink started on a log whose last record, seq %d, is not the one its head named: the newest records were replaced", g.FoundSeq)
		} else {
			f.Detail = fmt.Sprintf("hostlink started on a log that ended at seq %d while its head named seq %d: records %d-%d were cut off (files deleted, the log truncated or emptied)", g.FoundSeq, e.Seq-1, g.FoundSeq+1, e.Seq-1)
		}
	case GapHeadMissing:
		f.Detail = fmt.Sprintf("hostlink started on a log ending at seq %d without its head file: records cut off the end before then would have gone unnoticed", g.FoundSeq)
	default:
		f.Detail = fmt.Sprintf("hostlink started on a log ending at seq %d with a head file that was not valid (%s): records cut off the end before then would have gone unnoticed", g.FoundSeq, g.Detail)
	}
	return f
}
