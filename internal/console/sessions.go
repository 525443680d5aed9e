package console

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
)

// clientSession is one client session as the audit log shows it: the
// calls one MCP session or control-channel connection made (grouped by
// the session the records name, whatever connection carried each call;
// records without one by transport and measured peer).
type clientSession struct {
	Ref       string // audit.SessionRef, "" for records that name none
	Transport audit.Transport
	Peer      string // as first recorded: "claude-code 2.1.197 (127.0.0.1:50628)"
	Client    string // the declared name and version, if the client gave them
	Addresses []string
	First     time.Time
	Last      time.Time
	Calls     int
	Failed    int
	Classes   []classCount
	Pending   []approvals.Approval
	Grants    []approvals.Grant // in force
	Ended     []approvals.Grant // ended lately
	// Connected: the transport reports the session open now; known only
	// for sessions the records name.
	Connected bool
}

type classCount struct {
	Class string
	N     int
}

// Href is the session's page, with its timeline.
func (c *clientSession) Href() string {
	if c.Ref != "" {
		return Prefix + "sessions?" + filter{Session: c.Ref}.Query()
	}
	return Prefix + "sessions?" + filter{Peer: c.Peer, Transport: string(c.Transport)}.Query()
}

// Address is where the session's calls came from: the measured peer, or
// the first of several with how many more.
func (c *clientSession) Address() string {
	switch len(c.Addresses) {
	case 0:
		return ""
	case 1:
		return c.Addresses[0]
	}
	return c.Addresses[0] + " and " + strconv.Itoa(len(c.Addresses)-1) + " more"
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

// sessionKey is what groups r's record with the others of its session.
func sessionKey(r *row) string {
	if r.Session != "" {
		return r.Session
	}
	return string(r.Transport) + "\x00" + r.Client
}

// clientSessions groups the calls in the audit log (not the console's own,
// hostlink's events or the local user's own controls) by client session,
// the most recently active first, with each one's pending approvals and
// grants.
func (s *Server) clientSessions() ([]*clientSession, error) {
	lines, err := audit.Tail(s.o.AuditDir, scanDepth)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*clientSession{}
	var list []*clientSession
	counts := map[*clientSession]map[string]int{}
	recorded := audit.Recorded(lines)
	for i, l := range lines { // oldest first
		r := s.row(l)
		r.End = recorded[i]
		if !(filter{Calls: true}).keep(&r, l) || l.Peer == "" {
			continue
		}
		key := sessionKey(&r)
		c := byKey[key]
		event := strings.HasPrefix(l.Op, "approval_") || strings.HasPrefix(l.Op, "grant_")
		if c == nil {
			if event {
				continue // about a call (or a decision), not one: no session of its own
			}
			c = &clientSession{Ref: r.Session, Transport: l.Transport, Peer: l.Peer, Client: r.Name, First: r.Time}
			byKey[key] = c
			list = append(list, c)
			counts[c] = map[string]int{}
		}
		c.Last = r.End
		if event {
			continue
		}
		if c.Client == "" {
			c.Client = r.Name
		}
		if r.Address != "" && !slices.Contains(c.Addresses, r.Address) {
			c.Addresses = append(c.Addresses, r.Address)
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
		r := row{Transport: a.Action.Transport, Client: a.Action.Peer, Session: audit.SessionRef(a.Action.Session)}
		if c := byKey[sessionKey(&r)]; c != nil {
			c.Pending = append(c.Pending, a)
		}
	}
	grants, ended := s.o.Broker.Grants(), s.o.Broker.EndedGrants()
	for _, c := range list {
		c.Connected = c.Ref != "" && s.o.Sessions != nil && s.o.Sessions.Open(c.Ref)
		c.Grants, c.Ended = grantsFor(c, grants), grantsFor(c, ended)
	}
	slices.SortStableFunc(list, func(a, b *clientSession) int { return b.Last.Compare(a.Last) })
	return list, nil
}

// grantsFor are the grants of gs made for a client session ("this
// session" grants).
func grantsFor(c *clientSession, gs []approvals.Grant) []approvals.Grant {
	var out []approvals.Grant
	for _, g := range gs {
		if g.Session != "" && c.Ref != "" && audit.SessionRef(g.Session) == c.Ref {
			out = append(out, g)
		}
	}
	return out
}

// sessionFilter selects the sessions the sessions page lists: Client
// matches a part of the client's name or address; Connected keeps the
// ones open now.
type sessionFilter struct {
	Client    string
	Transport string
	Connected bool
}

func (f sessionFilter) keep(c *clientSession) bool {
	switch {
	case f.Connected && !c.Connected:
		return false
	case f.Transport != "" && string(c.Transport) != f.Transport:
		return false
	case f.Client != "" && !strings.Contains(strings.ToLower(c.Peer+" "+c.Client+" "+strings.Join(c.Addresses, " ")), strings.ToLower(f.Client)):
		return false
	}
	return true
}
