package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/hostlink/hostlink/internal/private"
)

// ErrCorrupt is wrapped by every *Failure: the log has been damaged or
// tampered with.
var ErrCorrupt = errors.New("audit: log is corrupt")

// Reason says why a line failed verification.
type Reason string

const (
	ReasonUnparsable Reason = "unparsable line"     // not a line this package writes
	ReasonTruncated  Reason = "truncated last line" // the file does not end in a newline
	ReasonBadMAC     Reason = "bad MAC"             // altered, or written with another key
	ReasonChainBreak Reason = "chain break"         // prev_mac is not the previous record's MAC
	ReasonSeqGap     Reason = "seq gap"             // seq is not the previous record's plus one
	// ReasonMissing: the oldest records are gone and no checkpoint
	// accounts for them: files were removed other than by retention.
	ReasonMissing Reason = "missing records"
	// ReasonCut: the newest records are gone: the log ends before the
	// record its head names, or a restart found it so (a GapOp record).
	ReasonCut Reason = "records cut off"
	// ReasonHead: the head file is missing or holds no head valid with
	// the key, now or at a restart (a GapOp record), so records cut off
	// the end would go unnoticed.
	ReasonHead Reason = "head lost"
)

// Failure locates the first line that failed verification. It is an error
// wrapping ErrCorrupt.
type Failure struct {
	File   string // base name, e.g. "audit.log"
	Line   int    // 1-based; 0 means the file's last line (Open reads no further); -1 the file as a whole
	Reason Reason
	Detail string
}

func (f *Failure) Error() string {
	where := fmt.Sprintf(" line %d", f.Line)
	switch f.Line {
	case 0:
		where = " last line"
	case -1:
		where = ""
	}
	return fmt.Sprintf("%v: %s%s: %s: %s", ErrCorrupt, f.File, where, f.Reason, f.Detail)
}

func (f *Failure) Unwrap() error { return ErrCorrupt }

// Report is the outcome of Verify.
type Report struct {
	Files    []string // base names of the files checked, in chain order
	Records  int      // records that verified
	FirstSeq uint64   // seq of the first record; > 1 means older files were removed (by retention: see Verify)
	LastSeq  uint64   // seq of the last record that verified
	// Gaps are what says that the newest records may be gone, in chain
	// order: each restart that found the log cut back or its head lost
	// (a GapOp record), then the head file if the log does not reach
	// the record it names, or it is missing or invalid.
	Gaps    []*Failure
	Failure *Failure // nil if every record verified and there are no Gaps

	firstPrev string      // prev_mac of the first record
	firstGap  *gapDetails // the first record's, if it is a gap record
	head      head        // the head file's, if valid
	headMAC   string      // the MAC of the record at head.Seq, as verified
}

// chain is the state carried from one record to the next.
type chain struct {
	seq uint64 // 0 before the first record
	mac string
}

// next checks that e, whose MAC is mac, follows the chain, and advances it.
func (c *chain) next(e *entry, mac string) *Failure {
	switch {
	case c.seq == 0 && e.Seq == 0:
		return &Failure{Reason: ReasonSeqGap, Detail: "seq is 0"}
	case c.seq == 0 && (e.Seq == 1) != (e.PrevMAC == ""):
		// Only the very first record may have no predecessor.
		return &Failure{Reason: ReasonChainBreak, Detail: fmt.Sprintf("seq %d with prev_mac %q", e.Seq, e.PrevMAC)}
	case c.seq != 0 && e.Seq != c.seq+1:
		return &Failure{Reason: ReasonSeqGap, Detail: fmt.Sprintf("seq %d follows %d", e.Seq, c.seq)}
	case c.seq != 0 && e.PrevMAC != c.mac:
		return &Failure{Reason: ReasonChainBreak, Detail: fmt.Sprintf("prev_mac does not match the MAC of seq %d", c.seq)}
	}
	c.seq, c.mac = e.Seq, mac
	return nil
}

// Verify checks every log file in dir, in chain order, with key, and the
// head file at headPath ("" → dir/audit.head). It returns an error
// wrapping ErrCorrupt (the Report's Failure) at the first line that is
// unparsable, truncated, fails its MAC, or does not follow its
// predecessor, or, when the oldest records are gone, if no checkpoint
// record (written by retention, see Options.MaxTotalBytes) names the last
// of them; otherwise, at the first of the Report's Gaps: the newest
// records are gone, or the head that would tell is. It returns another
// error if the files cannot be read.
func Verify(dir, headPath string, key []byte) (Report, error) {
	var rep Report
	if headPath == "" {
		headPath = filepath.Join(dir, headName)
	}
	h, hst, herr := readHeadFile(headPath, key)
	if herr != nil && !errors.Is(herr, fs.ErrNotExist) {
		return rep, fmt.Errorf("audit: head: %w", herr)
	}
	if herr == nil && hst == headValid {
		rep.head = h
	}
	names, err := logFiles(dir)
	if err != nil {
		return rep, err
	}
	if len(names) == 0 {
		if rep.head.Seq > 0 {
			rep.Failure = headFailure(headPath, ReasonCut, "there are no log files in %s, but the head names seq %d: the log was deleted", dir, h.Seq)
			rep.Gaps = []*Failure{rep.Failure}
			return rep, rep.Failure
		}
		return rep, fmt.Errorf("audit: no log files in %s: %w", dir, fs.ErrNotExist)
	}
	var c chain
	cps := scanCheckpoints(dir, key, names)
	for _, name := range cps.skipRemoved(names) {
		fail, err := verifyFile(filepath.Join(dir, name), key, &c, &rep, cps)
		if errors.Is(err, fs.ErrNotExist) && rep.Records == 0 {
			continue // removed by retention since it was listed
		}
		rep.Files = append(rep.Files, name)
		if err != nil {
			return rep, fmt.Errorf("audit: %w", err)
		}
		if fail != nil {
			fail.File = name
			rep.Failure = fail
			return rep, fail
		}
	}
	if rep.FirstSeq > 1 && !rep.startCovered(cps) {
		rep.Failure = &Failure{File: rep.Files[0], Line: 1, Reason: ReasonMissing,
			Detail: fmt.Sprintf("records before seq %d are gone and no checkpoint accounts for them (files were removed, and not by retention)", rep.FirstSeq)}
		return rep, rep.Failure
	}
	if f := rep.checkHead(headPath, herr, hst); f != nil {
		rep.Gaps = append(rep.Gaps, f)
	}
	if len(rep.Gaps) > 0 {
		rep.Failure = rep.Gaps[0]
		return rep, rep.Failure
	}
	return rep, nil
}

// startCovered reports whether something accounts for the records before
// the first one kept: a checkpoint names the last of them, or the first
// record is a gap record after a log found empty or ending with a record
// a checkpoint names.
func (rep *Report) startCovered(cps *checkpoints) bool {
	if g := rep.firstGap; g != nil && g.Reason == GapRecordsMissing {
		mac, ok := cps.last[g.FoundSeq]
		return g.FoundSeq == 0 || (ok && mac == g.FoundMAC)
	}
	return cps.covers(&entry{Seq: rep.FirstSeq, PrevMAC: rep.firstPrev})
}

// checkHead compares the head file (read with err and state st) with the
// end of the chain.
func (rep *Report) checkHead(path string, err error, st headState) *Failure {
	h := rep.head
	switch {
	case err != nil:
		return headFailure(path, ReasonHead, "there is no head file: records cut off the end of the log would go unnoticed (hostlink writes it with every record)")
	case st != headValid:
		return headFailure(path, ReasonHead, "%s: records cut off the end of the log would go unnoticed", st.describe())
	case h.Seq > rep.LastSeq:
		return headFailure(path, ReasonCut, "the log ends at seq %d, but the head names seq %d: the newest records were cut off (files deleted, the log truncated or emptied)", rep.LastSeq, h.Seq)
	case h.Seq == 0 || h.Seq < rep.FirstSeq:
		// Nothing to compare: the head lags behind every record kept.
	case rep.headMAC != h.MAC:
		return headFailure(path, ReasonCut, "the head names seq %d with another MAC than the log's: the log's records from there on are not the ones the head was written after", h.Seq)
	}
	return nil
}

func verifyFile(path string, key []byte, c *chain, rep *Report, cps *checkpoints) (*Failure, error) {
	f, err := private.OpenShared(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(r)
		if err == io.EOF {
			return nil, nil
		}
		fail := func(f *Failure) *Failure { f.Line = n; return f }
		switch {
		case err == io.ErrUnexpectedEOF:
			return fail(&Failure{Reason: ReasonTruncated, Detail: "no newline at end of file"}), nil
		case err == errLineTooLong:
			return fail(&Failure{Reason: ReasonUnparsable, Detail: err.Error()}), nil
		case err != nil:
			return nil, err
		}
		e, mac, bad := verifyLine(key, line)
		var gap gapDetails
		isGap := false
		if bad == nil {
			gap, isGap = gapOf(e)
			bad = c.next(e, mac)
			if bad != nil && isGap && gap.bridges(e, c) {
				bad, c.seq, c.mac = nil, e.Seq, mac
			}
		}
		if bad != nil {
			return fail(bad), nil
		}
		if isGap {
			g := gap.failure(e, n)
			g.File = filepath.Base(path)
			rep.Gaps = append(rep.Gaps, g)
		}
		if rep.Records == 0 {
			rep.FirstSeq, rep.firstPrev = e.Seq, e.PrevMAC
			if isGap {
				rep.firstGap = &gap
			}
		}
		if e.Seq == rep.head.Seq {
			rep.headMAC = mac
		}
		cps.add(e)
		rep.Records++
		rep.LastSeq = e.Seq
	}
}

var errLineTooLong = fmt.Errorf("line longer than %d bytes", maxLine)

// readLine returns the next line without its newline: io.EOF at the end,
// io.ErrUnexpectedEOF for a last line with no newline.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, errLineTooLong
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte{'\n'}), nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(line) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}
