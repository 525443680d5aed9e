package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Section is the heading of the table in hostlink's docs/PROTOCOL.md.
const Section = "## Differences from upstream"

// Row is one deliberate difference.
type Row struct {
	ID, Message, Upstream, Hostlink, Why string
}

// ParseTable reads the differences table from PROTOCOL.md's text: the
// first table under Section, whose first column is the difference's id in
// backticks.
func ParseTable(md []byte) (map[string]Row, error) {
	rows := map[string]Row{}
	in, table := false, false
	sc := bufio.NewScanner(bytes.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			if in && table {
				return rows, nil
			}
			in = line == Section
			continue
		case !in:
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if table {
				return rows, nil
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 5 {
			return nil, fmt.Errorf("differences table: row %q has %d cells, want 5", line, len(cells))
		}
		if !table || strings.HasPrefix(cells[0], "---") {
			table = true // the header and its rule
			continue
		}
		id := strings.Trim(cells[0], "`")
		if id == cells[0] || id == "" {
			return nil, fmt.Errorf("differences table: the id %q is not in backticks", cells[0])
		}
		if _, dup := rows[id]; dup {
			return nil, fmt.Errorf("differences table: %s is listed twice", id)
		}
		if cells[4] == "" {
			return nil, fmt.Errorf("differences table: %s gives no reason", id)
		}
		rows[id] = Row{id, cells[1], cells[2], cells[3], cells[4]}
	}
	if !table {
		return nil, fmt.Errorf("no table under %q", Section)
	}
	return rows, nil
}

// Platform checks frames against upstream's vocabulary and fails a test
// on a difference the table does not list. It records which rows it saw.
type Platform struct {
	rows map[string]Row
	mu   sync.Mutex
	seen map[string]bool
}

// Load reads the table from the PROTOCOL.md at path.
func Load(t testing.TB, path string) *Platform {
	t.Helper()
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParseTable(md)
	if err != nil {
		t.Fatal(err)
	}
	return &Platform{rows: rows, seen: map[string]bool{}}
}

// Rows is the table.
func (p *Platform) Rows() map[string]Row { return p.rows }

// Check reports, as test errors, every difference of the reply (see
// Reply) that has no row, and every one upstream's parser rejects.
func (p *Platform) Check(t testing.TB, req, typ string, payload []byte) {
	t.Helper()
	for _, d := range Reply(req, typ, payload) {
		p.mu.Lock()
		p.seen[d.ID] = true
		p.mu.Unlock()
		_, listed := p.rows[d.ID]
		switch {
		case d.Rejected:
			t.Errorf("%s: upstream's parser rejects this frame: %s (%s)", req+" "+typ, d.ID, d.Detail)
		case !listed:
			t.Errorf("%s: a difference from upstream not in the table: %s (%s)", req+" "+typ, d.ID, d.Detail)
		}
	}
}

// Behaves records a probe of behaviour the frames' shape does not show:
// differs reports whether hostlink answered otherwise than upstream does
// (got says how). A difference needs its row; a row whose probe finds
// none is stale and must go.
func (p *Platform) Behaves(t testing.TB, id string, differs bool, got string) {
	t.Helper()
	p.mu.Lock()
	p.seen[id] = differs
	p.mu.Unlock()
	_, listed := p.rows[id]
	switch {
	case differs && !listed:
		t.Errorf("a difference from upstream not in the table: %s (hostlink: %s)", id, got)
	case !differs && listed:
		t.Errorf("the table lists %s, but hostlink now behaves as upstream (%s): remove the row", id, got)
	}
}

// DocOnly is the prefix of rows no frame or probe can show (how sessions
// run, reconnection timing): they are documented, not checked.
const DocOnly = "doc:"

// Unseen returns the rows for which in is true that neither Check nor
// Behaves observed, DocOnly ones aside: a suite that covers those
// messages leaves none.
func (p *Platform) Unseen(in func(id string) bool) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for id := range p.rows {
		if !p.seen[id] && !strings.HasPrefix(id, DocOnly) && in(id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Seen reports whether a difference with id was observed.
func (p *Platform) Seen(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[id]
}

// Computer reports whether a difference's id is about a computer-use
// message (a suite without a desktop cannot observe it).
func Computer(id string) bool {
	req := id
	if i := strings.IndexAny(id, ":.!→"); i >= 0 {
		req = id[:i]
	}
	msg := Upstream().Messages[req]
	return msg != nil && msg.Capability == "computer_use"
}
