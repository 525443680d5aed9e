package console

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
)

// clientSession is one client connection as the audit log shows it: every
// call carried by one transport from one measured peer (for MCP over
// HTTP, the client's declared name and version and its address; for the
// control channel, its process).
type clientSession struct {
	Transport audit.Transport
	Peer      string // as recorded: "claude-code 2.1.197 (127.0.0.1:50628)"
	Client    string // the declared name and version, if the client gave them
	Address   string // the measured peer
	First     time.Time
	Last      time.Time
	Calls     int
	Failed    int
	Classes   []classCount
	Pending   []approvals.Approval
	Grants    []approvals.Grant
}

type classCount struct {
	Class string
	N     int
}

// Href is the session's page, with its timeline.
func (c *clientSession) Href() string {
	return Prefix + "sessions?" + filter{Client: c.Peer, Transport: string(c.Transport)}.Query()
}

// splitPeer separates a client's declared name from the measured peer,
// as mcpserve records them: "name version (peer)".
func splitPeer(peer string) (client, address string) {
	if strings.HasSuffix(peer, ")") {
		if i := strings.LastIndex(peer, " ("); i > 0 {
			return peer[:i], peer[i+2 : len(peer)-1]
		}
	}
	return "", peer
}

// sessions groups the calls in the audit log (not the console's own, nor
// hostlink's events) by transport and peer, the most recently active
// first, with each one's pending approvals.
func (s *Server) clientSessions() ([]*clientSession, error) {
	lines, err := audit.Tail(s.o.AuditDir, scanDepth)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*clientSession{}
	var list []*clientSession
	counts := map[*clientSession]map[string]int{}
	for _, l := range lines { // oldest first
		r := s.row(l)
		if !(filter{Calls: true}).keep(&r, l) || l.Peer == "" {
			continue
		}
		key := string(l.Transport) + "\x00" + l.Peer
		c := byKey[key]
		if c == nil {
			c = &clientSession{Transport: l.Transport, Peer: l.Peer, First: l.Time}
			c.Client, c.Address = splitPeer(l.Peer)
			byKey[key] = c
			list = append(list, c)
			counts[c] = map[string]int{}
		}
		c.Last = l.Time
		if strings.HasPrefix(l.Op, "approval_") || strings.HasPrefix(l.Op, "grant_") {
			continue // events about calls, not calls
		}
		c.Calls++
		if !r.OK {
			c.Failed++
		}
		counts[c][cmp.Or(r.Class, "other")]++
	}
	for c, m := range counts {
		for class, n := range m {
			c.Classes = append(c.Classes, classCount{class, n})
		}
		slices.SortFunc(c.Classes, func(a, b classCount) int { return cmp.Compare(a.Class, b.Class) })
	}
	for _, a := range s.o.Broker.List(true) {
		if c := byKey[string(a.Action.Transport)+"\x00"+a.Action.Peer]; c != nil {
			c.Pending = append(c.Pending, a)
		}
	}
	for _, c := range list {
		c.Grants = s.grantsFor(c)
	}
	slices.SortStableFunc(list, func(a, b *clientSession) int { return b.Last.Compare(a.Last) })
	return list, nil
}
