package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hostlink/hostlink/internal/devplatform"
)

// AdditionsSection is the heading of the additions table in hostlink's
// docs/PROTOCOL.md.
const AdditionsSection = "## Additions"

// ParseAdditions reads the additions table from PROTOCOL.md's text: for
// each of hostlink's capabilities (first column, in backticks) the ids of
// what it lets hostlink send that upstream's parser would reject (the
// backticked ids of the third column; see Difference). Nothing else ever
// may be.
func ParseAdditions(md []byte) (map[string][]string, error) {
	out := map[string][]string{}
	in, table := false, false
	ident := regexp.MustCompile("`([^`]+)`")
	sc := bufio.NewScanner(bytes.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			if in && table {
				break
			}
			in = strings.HasPrefix(line, AdditionsSection)
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			if table {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			return nil, fmt.Errorf("additions table: row %q has %d cells, want 4", line, len(cells))
		}
		if !table || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") {
			table = true
			continue
		}
		c := ident.FindStringSubmatch(cells[0])
		if c == nil {
			return nil, fmt.Errorf("additions table: %q names no capability in backticks", cells[0])
		}
		if _, dup := out[c[1]]; dup {
			return nil, fmt.Errorf("additions table: %s is listed twice", c[1])
		}
		out[c[1]] = []string{}
		for _, m := range ident.FindAllStringSubmatch(cells[2], -1) {
			if !additionID.MatchString(m[1]) {
				return nil, fmt.Errorf("additions table: %s: %q is not a difference id", c[1], m[1])
			}
			out[c[1]] = append(out[c[1]], m[1])
		}
	}
	if !table {
		return nil, fmt.Errorf("no table under %q", AdditionsSection)
	}
	return out, nil
}

// additionID is what an addition may be: a message type of hostlink's
// own, or a field of one of upstream's, in a reply to a request or not.
var additionID = regexp.MustCompile(`^([A-Z][A-Z0-9_]*:)?[A-Z][A-Z0-9_]*(\.[a-z][a-z0-9_]*)?$`)

// Recorder checks every frame of a platform's connections as a platform
// built on upstream's models parses them. A frame hostlink sends may
// carry what upstream's parser rejects only as an addition of a
// capability the platform granted on that connection; without
// hostlink_errors granted, every error code is upstream's.
type Recorder struct {
	model     *Model
	additions map[string][]string

	mu       sync.Mutex
	conns    map[uint64]*watched
	problems []string
	sent     map[string]int // frames hostlink sent, by type
	closed   bool
}

type watched struct {
	granted map[string]bool
	pending map[string]string // request id → type
}

// NewRecorder returns a recorder allowing the additions (ParseAdditions).
func NewRecorder(additions map[string][]string) *Recorder {
	return &Recorder{model: Upstream(), additions: additions, conns: map[uint64]*watched{}, sent: map[string]int{}}
}

// Frame records one frame of connection conn: one hostlink sent, or one
// the platform sent (which says what the next replies answer and, in
// HELLO_ACK, what was granted).
func (r *Recorder) Frame(conn uint64, peer string, fromExecutor bool, b []byte) {
	var env struct {
		Type    string          `json:"type"`
		ID      string          `json:"id"`
		Payload json.RawMessage `json:"payload"`
	}
	json.Unmarshal(b, &env)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	w := r.conns[conn]
	if w == nil {
		w = &watched{granted: map[string]bool{}, pending: map[string]string{}}
		r.conns[conn] = w
	}
	if !fromExecutor {
		switch env.Type {
		case "HELLO_ACK":
			var ack struct {
				Granted []string `json:"granted_capabilities"`
			}
			json.Unmarshal(env.Payload, &ack)
			for _, g := range ack.Granted {
				w.granted[g] = true
			}
		case "PONG", "ACK", "ERROR":
		default:
			if env.ID != "" {
				w.pending[env.ID] = env.Type
			}
		}
		return
	}
	req := w.pending[env.ID]
	delete(w.pending, env.ID)
	typ, _, diffs := r.model.Frame(req, b)
	r.sent[typ]++
	for _, d := range diffs {
		if !r.allowed(w, d.ID) {
			r.problems = append(r.problems, fmt.Sprintf("%s: hostlink sent %s, which upstream's parser rejects: %s (%s); frame %s",
				peer, prefix(req, typ), d.ID, d.Detail, textsafe.Clip(string(b), 300)))
		}
	}
	if typ == "ERROR" && !w.granted["hostlink_errors"] {
		var p struct {
			Code string `json:"code"`
		}
		json.Unmarshal(env.Payload, &p)
		if !r.model.ErrorCodes[p.Code] {
			r.problems = append(r.problems, fmt.Sprintf("%s: an error code upstream does not have, without hostlink_errors granted: %s", peer, p.Code))
		}
	}
}

// allowed reports whether a capability granted on the connection lets
// hostlink send what id names.
func (r *Recorder) allowed(w *watched, id string) bool {
	for c, ids := range r.additions {
		if w.granted[c] && slices.Contains(ids, id) {
			return true
		}
	}
	return false
}

// Problems returns what was recorded so far.
func (r *Recorder) Problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.problems)
}

// Sent reports how many frames of type typ hostlink sent.
func (r *Recorder) Sent(typ string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[typ]
}

// close stops recording and returns the problems.
func (r *Recorder) close() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.problems
}

// Watch checks every frame of srv's connections with a Recorder allowing
// the additions of the PROTOCOL.md at protocolMD, and fails t at its end
// on every problem.
func Watch(t testing.TB, srv *devplatform.Server, protocolMD string) *Recorder {
	t.Helper()
	md, err := os.ReadFile(protocolMD)
	if err != nil {
		t.Fatal(err)
	}
	adds, err := ParseAdditions(md)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRecorder(adds)
	srv.SetTap(func(f devplatform.TapFrame) { r.Frame(f.Conn, f.Peer, f.FromExecutor, f.Frame) })
	t.Cleanup(func() {
		for _, p := range r.close() {
			t.Error(p)
		}
	})
	return r
}
