package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/hostlink/hostlink/internal/private"
)

// Line is a record read back from the log, for display.
type Line struct {
	Record
	Seq       uint64
	MachineID string
	Version   string
	PrevMAC   string
	MAC       string
}

// Tail returns the last n records in dir, oldest first, reading back
// across rotated files as needed. It does not check MACs or the chain (it
// needs no key; use Verify for that) and skips a final line that is still
// being written.
func Tail(dir string, n int) ([]Line, error) {
	names, err := logFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []Line // newest first until the end
	for i := len(names) - 1; i >= 0 && len(out) < n; i-- {
		lines, err := tailFile(filepath.Join(dir, names[i]), n-len(out))
		if errors.Is(err, fs.ErrNotExist) && i < len(names)-1 {
			break // removed by retention since it was listed: older still are gone too
		}
		if err != nil {
			return nil, fmt.Errorf("audit: %s: %w", names[i], err)
		}
		for j := len(lines) - 1; j >= 0; j-- {
			out = append(out, lines[j])
		}
	}
	slices.Reverse(out)
	return out, nil
}

func tailFile(path string, n int) ([]Line, error) {
	f, err := private.OpenShared(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	raw, _, err := tailLines(f, fi.Size(), n)
	if err != nil {
		return nil, err
	}
	lines := make([]Line, 0, len(raw))
	for _, r := range raw {
		l, err := parseLine(r)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// parseLine decodes a line for display, without checking its MAC.
func parseLine(raw []byte) (Line, error) {
	body, mac, ok := splitLine(raw)
	if !ok {
		return Line{}, fmt.Errorf("unparsable line: no \"mac\" field at the end")
	}
	e, err := decodeBody(body)
	if err != nil {
		return Line{}, fmt.Errorf("unparsable line: %w", err)
	}
	return lineOf(e, mac)
}

// lineOf is the Line of a decoded entry and its MAC.
func lineOf(e *entry, mac string) (Line, error) {
	ts, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		return Line{}, fmt.Errorf("seq %d: %w", e.Seq, err)
	}
	var details map[string]any
	dec := json.NewDecoder(bytes.NewReader(e.Details))
	dec.UseNumber() // keep integers exact
	if err := dec.Decode(&details); err != nil {
		return Line{}, fmt.Errorf("seq %d: details: %w", e.Seq, err)
	}
	return Line{
		Record: Record{
			Time:      ts,
			Transport: Transport(e.Transport),
			Peer:      e.Peer,
			Op:        e.Op,
			RequestID: e.RequestID,
			Workdir:   e.Workdir,
			Paths:     e.Paths,
			Code:      e.Code,
			Bytes:     e.Bytes,
			Duration:  time.Duration(e.DurationMS) * time.Millisecond,
			Details:   details,
		},
		Seq:       e.Seq,
		MachineID: e.MachineID,
		Version:   e.Version,
		PrevMAC:   e.PrevMAC,
		MAC:       mac,
	}, nil
}

// MarshalJSON encodes l under the field names of its line on disk (ts,
// duration_ms, prev_mac, mac, …), on one line: what `hostlink audit tail
// --json` prints.
func (l Line) MarshalJSON() ([]byte, error) {
	details, err := canonicalDetails(l.Details)
	if err != nil {
		return nil, err
	}
	return json.Marshal(lineJSON{entry{
		Bytes:      l.Bytes,
		Code:       l.Code,
		Details:    details,
		DurationMS: l.Duration.Milliseconds(),
		MachineID:  l.MachineID,
		Op:         l.Op,
		Paths:      l.Paths,
		Peer:       l.Peer,
		PrevMAC:    l.PrevMAC,
		RequestID:  l.RequestID,
		Seq:        l.Seq,
		Transport:  string(l.Transport),
		TS:         l.Time.UTC().Format(tsLayout),
		Version:    l.Version,
		Workdir:    l.Workdir,
	}, l.MAC})
}

// UnmarshalJSON decodes what MarshalJSON encodes, without checking that it
// is canonical or signed (Verify does that for the log itself).
func (l *Line) UnmarshalJSON(b []byte) error {
	var j lineJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if len(j.Details) == 0 {
		j.Details = json.RawMessage("{}")
	}
	line, err := lineOf(&j.entry, j.MAC)
	if err != nil {
		return err
	}
	*l = line
	return nil
}

// lineJSON is a line as it is on disk: its entry and its MAC.
type lineJSON struct {
	entry
	MAC string `json:"mac"`
}

// Recorded returns when each of lines (oldest first, as Tail returns
// them) was recorded, as far as the log tells: the end of its call (Time
// plus Duration), or the time of the record before it if that is later,
// since a record is written after every record before it in the chain.
// Unlike the start times, these follow the chain's order.
func Recorded(lines []Line) []time.Time {
	out := make([]time.Time, len(lines))
	var last time.Time
	for i, l := range lines {
		t := l.Time.Add(l.Duration)
		if t.Before(last) {
			t = last
		}
		out[i], last = t, t
	}
	return out
}
