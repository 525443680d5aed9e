package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/textsafe"
)

func (s *Server) route(w http.ResponseWriter, r *http.Request, sess *session, path string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	post := r.Method == http.MethodPost
	switch {
	case path == "/" || path == "":
		http.Redirect(w, r, Prefix+"approvals", http.StatusSeeOther)
	case parts[0] == "logout" && post:
		s.logout(w, sess)
		http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
	case parts[0] == "approvals" && len(parts) == 1 && !post:
		s.approvalsPage(w, r, sess)
	case parts[0] == "approvals" && len(parts) == 2 && !post:
		s.approvalPage(w, r, sess, parts[1])
	case parts[0] == "approvals" && len(parts) == 3 && parts[2] == "decide" && post:
		s.decide(w, r, sess, parts[1])
	case parts[0] == "approvals" && len(parts) == 3 && parts[2] == "confirm" && post:
		s.confirm(w, r, sess, parts[1])
	case parts[0] == "approvals" && len(parts) == 3 && parts[2] == "image" && !post:
		s.approvalImage(w, r, parts[1])
	case parts[0] == "grants" && len(parts) == 3 && parts[2] == "revoke" && post:
		s.revoke(w, r, sess, parts[1])
	case parts[0] == "grants" && len(parts) == 3 && parts[2] == "save":
		s.saveGrant(w, r, sess, parts[1])
	case parts[0] == "approvals" && len(parts) == 2 && parts[1] == "decide" && post:
		s.decideBatch(w, r, sess)
	case parts[0] == "sessions" && !post:
		s.sessionsPage(w, r, sess)
	case parts[0] == "activity" && !post:
		s.activityPage(w, r, sess)
	case parts[0] == "audit" && !post:
		s.auditPage(w, r, sess)
	case parts[0] == "commands" && len(parts) == 1 && !post:
		s.commandsPage(w, r, sess)
	case parts[0] == "commands" && len(parts) == 2 && !post:
		s.commandPage(w, r, sess, parts[1])
	case parts[0] == "agents" && !post:
		s.agentsPage(w, r, sess, parts)
	case parts[0] == "desktop" && len(parts) == 3 && parts[1] == "thumb" && !post:
		s.thumbnail(w, r, parts[2])
	case parts[0] == "desktop" && !post:
		s.desktopPage(w, r, sess)
	case parts[0] == "status" && !post:
		s.statusPage(w, r, sess)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) approvalsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	all := s.o.Broker.List(false)
	var pending []approvals.Approval
	var done []approvals.Approval
	for _, a := range all {
		if a.State == "pending" {
			pending = append(pending, a)
		} else {
			done = append(done, a)
		}
	}
	ended := s.o.Broker.EndedGrants()
	// Newest decision first, by when it was decided (an expiry at its
	// deadline), whatever order the requests came in.
	slices.SortStableFunc(done, func(a, b approvals.Approval) int { return decidedAt(b).Compare(decidedAt(a)) })
	done = done[:min(len(done), 50)]
	data := map[string]any{"Title": "Approvals", "Pending": pending, "Done": done, "Grants": s.o.Broker.Grants(),
		"Ended": ended[:min(len(ended), 10)], "CanSave": s.o.SaveGrant != nil}
	// What the last decision did, said once after it (decide redirects
	// here with its ids).
	for _, id := range r.URL.Query()["decided"] {
		if a, ok := s.o.Broker.Get(id); ok && a.State != approvals.Pending {
			data["Decided"] = append(asApprovals(data["Decided"]), a)
		}
	}
	switch r.URL.Query().Get("fragment") {
	case "":
	case "recent":
		data["Fragment"] = "approvals-recent"
	case "grants":
		data["Fragment"] = "grants"
	default:
		data["Fragment"] = "approvals-live"
	}
	s.render(w, "approvals", sess, data)
}

func (s *Server) approvalPage(w http.ResponseWriter, r *http.Request, sess *session, id string) {
	a, ok := s.o.Broker.Get(id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.render(w, "approval", sess, map[string]any{"Title": "Approval " + a.ID, "A": a})
}

// decide approves, with the scope chosen, or denies, recording the
// console session as who decided.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, sess *session, id string) {
	a, ok := s.o.Broker.Get(id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	d, bad := s.decision(r, sess, &a)
	if bad != "" {
		http.Error(w, bad, http.StatusBadRequest)
		return
	}
	if _, err := s.o.Broker.DecideWith(id, d); err != nil {
		http.Error(w, textsafe.Line(err.Error()), http.StatusConflict)
		return
	}
	http.Redirect(w, r, Prefix+"approvals?"+url.Values{"decided": {id}}.Encode(), http.StatusSeeOther)
}

// confirm confirms the decision proposed for an approval on the control
// channel (confirm_in_person): exactly the proposal the page showed, or
// nothing.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request, sess *session, id string) {
	if _, err := s.o.Broker.Confirm(id, r.PostFormValue("proposal"), s.decider(r, sess), audit.Console); err != nil {
		http.Error(w, textsafe.Line(err.Error()), http.StatusConflict)
		return
	}
	http.Redirect(w, r, Prefix+"approvals", http.StatusSeeOther)
}

// decideBatch approves or denies every approval named in ids at once
// ("approve these 3"); the ones no longer pending are reported, the
// others decided.
func (s *Server) decideBatch(w http.ResponseWriter, r *http.Request, sess *session) {
	d, bad := s.decision(r, sess, nil)
	if bad != "" {
		http.Error(w, bad, http.StatusBadRequest)
		return
	}
	ids := r.PostForm["id"]
	if len(ids) == 0 {
		http.Error(w, "select the approvals to decide", http.StatusBadRequest)
		return
	}
	var failed []string
	decided := url.Values{}
	for _, res := range s.o.Broker.DecideBatch(ids, d) {
		if res.Error != nil {
			failed = append(failed, textsafe.Line(res.Error.Error()))
		} else {
			decided.Add("decided", res.ID)
		}
	}
	if len(failed) > 0 {
		http.Error(w, strings.Join(failed, "\n"), http.StatusConflict)
		return
	}
	http.Redirect(w, r, Prefix+"approvals?"+decided.Encode(), http.StatusSeeOther)
}

// decider is who a console decision is recorded as.
func (s *Server) decider(r *http.Request, sess *session) string {
	return "console session " + sess.id[:8] + " from " + r.RemoteAddr
}

// auditLines returns the last n audit records, newest first, that match
// keep.
func (s *Server) auditLines(n int, keep func(audit.Line) bool) ([]audit.Line, error) {
	lines, err := audit.Tail(s.o.AuditDir, scanDepth)
	if err != nil {
		return nil, err
	}
	var out []audit.Line
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if keep == nil || keep(lines[i]) {
			out = append(out, lines[i])
		}
	}
	return out, nil
}

// activityPage is what clients did, newest first, filtered; the table
// grows by itself with new calls that match.
func (s *Server) activityPage(w http.ResponseWriter, r *http.Request, sess *session) {
	f := filterFrom(r.URL.Query())
	f.Calls = true
	rows, ch, err := s.rows(200, f)
	data := map[string]any{"Title": "Activity", "Rows": rows, "F": f, "Choices": ch, "Err": err}
	if r.URL.Query().Get("fragment") != "" {
		data["Fragment"] = "rows"
	}
	s.render(w, "activity", sess, data)
}

func (s *Server) auditPage(w http.ResponseWriter, r *http.Request, sess *session) {
	q := r.URL.Query()
	n, _ := strconv.Atoi(q.Get("n"))
	if n <= 0 || n > 2000 {
		n = 200
	}
	f := filterFrom(q)
	rows, ch, err := s.rows(n, f)
	data := map[string]any{"Title": "Audit log", "Rows": rows, "F": f, "Choices": ch, "Err": err, "N": n}
	if q.Get("verify") != "" && s.o.AuditKey != nil {
		key, kerr := s.o.AuditKey()
		if kerr != nil {
			data["VerifyErr"] = "the audit key cannot be read"
		} else {
			rep, verr := audit.Verify(s.o.AuditDir, s.o.AuditHead, key)
			data["Report"] = rep
			if verr != nil {
				data["VerifyErr"] = verr.Error()
			}
		}
	}
	s.render(w, "audit", sess, data)
}

// sessionsPage lists client sessions, filtered; with session (or, for
// records that name none, transport and peer) set, it shows that one with
// its timeline.
func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	list, err := s.clientSessions()
	q := r.URL.Query()
	f := filterFrom(q)
	data := map[string]any{"Title": "Sessions", "Err": err}
	if f.Session != "" || f.Peer != "" {
		for _, c := range list {
			if f.Session != "" && c.Ref == f.Session || f.Session == "" && c.Ref == "" && c.Peer == f.Peer && string(c.Transport) == f.Transport {
				f.Calls = true
				rows, _, rerr := s.rows(500, f)
				data["Title"], data["One"], data["Rows"], data["F"] = "Session", c, rows, f
				if rerr != nil {
					data["Err"] = rerr
				}
			}
		}
		if data["One"] == nil {
			http.NotFound(w, r)
			return
		}
	} else {
		sf := sessionFilter{Client: q.Get("client"), Transport: q.Get("transport"), Connected: q.Get("connected") != ""}
		var shown []*clientSession
		var transports []string
		for _, c := range list {
			if !slices.Contains(transports, string(c.Transport)) {
				transports = append(transports, string(c.Transport))
			}
			if sf.keep(c) {
				shown = append(shown, c)
			}
		}
		slices.Sort(transports)
		data["Sessions"], data["SF"], data["All"], data["Transports"] = shown, sf, len(list), transports
		data["Query"] = r.URL.Query().Encode()
	}
	if q.Get("fragment") != "" {
		data["Fragment"] = "rows"
		if data["One"] == nil {
			data["Fragment"] = "sessions-live"
		}
	}
	s.render(w, "sessions", sess, data)
}

func (s *Server) commandsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	res, err := s.call(r.Context(), r, "list_commands", map[string]any{"limit": 100})
	data := map[string]any{"Title": "Commands", "Err": err}
	if res != nil {
		data["Commands"] = res["commands"]
	} else if err == nil {
		data["Off"] = true
	}
	s.render(w, "commands", sess, data)
}

func (s *Server) commandPage(w http.ResponseWriter, r *http.Request, sess *session, id string) {
	st, err := s.call(r.Context(), r, "command_status", map[string]any{"capture_id": id})
	data := map[string]any{"Title": "Command " + id, "ID": id, "Status": st, "Err": err}
	// The command line, workdir and directory are in its list entry.
	if list, _ := s.call(r.Context(), r, "list_commands", map[string]any{"limit": 500}); list != nil {
		entries, _ := list["commands"].([]any)
		for _, e := range entries {
			if m, _ := e.(map[string]any); m["capture_id"] == id {
				data["Entry"] = m
			}
		}
	}
	for _, stream := range []string{"stdout", "stderr"} {
		out, err := s.call(r.Context(), r, "read_command_output", map[string]any{"capture_id": id, "stream": stream, "text": true})
		if err == nil && out != nil {
			data[stream] = out
		}
	}
	if r.URL.Query().Get("fragment") != "" {
		data["Fragment"] = "command-live"
	}
	s.render(w, "command", sess, data)
}

func (s *Server) agentsPage(w http.ResponseWriter, r *http.Request, sess *session, parts []string) {
	data := map[string]any{"Title": "Agent tasks"}
	if len(parts) == 2 {
		id := parts[1]
		task, err := s.call(r.Context(), r, agentapi.OpGetTask, map[string]any{"task_id": id})
		events, _ := s.call(r.Context(), r, agentapi.OpReadTaskEvents, map[string]any{"task_id": id, "max_events": 500})
		data["Title"], data["Task"], data["Events"], data["Err"] = "Agent task "+id, task, events, err
		s.render(w, "agent", sess, data)
		return
	}
	if _, ok := s.o.Registry.Lookup(agentapi.OpGetTask); !ok {
		data["Off"] = true
		s.render(w, "agents", sess, data)
		return
	}
	// Tasks are found through their audited submissions.
	lines, err := s.auditLines(100, func(l audit.Line) bool { return l.Op == agentapi.OpSubmitTask && l.Details["task_id"] != nil })
	var tasks []map[string]any
	var seen []string
	for _, l := range lines {
		id, _ := l.Details["task_id"].(string)
		if slices.Contains(seen, id) {
			continue
		}
		seen = append(seen, id)
		if t, err := s.call(r.Context(), r, agentapi.OpGetTask, map[string]any{"task_id": id}); err == nil && t != nil {
			tasks = append(tasks, t)
		}
	}
	data["Tasks"], data["Err"] = tasks, err
	s.render(w, "agents", sess, data)
}

// observed is one observation on the desktop page: the record that made
// it (a computer_observe, or the act whose fresh observation it is), its
// thumbnail if still kept, and the acts made on it.
type observed struct {
	ID    string
	By    row
	Thumb bool
	Acts  []row
}

// desktopPage lists observations, newest first, each with its thumbnail
// and the acts made on it (an act's record names the observation it
// consumed).
func (s *Server) desktopPage(w http.ResponseWriter, r *http.Request, sess *session) {
	lines, err := s.auditLines(400, func(l audit.Line) bool {
		return l.Op == desktopapi.OpObserve || l.Op == desktopapi.OpAct
	})
	var list []*observed
	byID := map[string]*observed{}
	acts := map[string][]row{} // by the observation acted on, newest first
	for _, l := range lines {  // newest first
		if on, _ := l.Details["on_observation"].(string); on != "" {
			acts[on] = append(acts[on], s.row(l))
		}
		id, _ := l.Details["observation_id"].(string)
		if id == "" || byID[id] != nil {
			continue
		}
		_, thumb := s.o.Thumbs.Get(id)
		o := &observed{ID: id, By: s.row(l), Thumb: thumb}
		byID[id] = o
		list = append(list, o)
	}
	for id, a := range acts {
		if o := byID[id]; o != nil {
			slices.Reverse(a)
			o.Acts = a
		}
	}
	s.render(w, "desktop", sess, map[string]any{"Title": "Desktop", "Observations": list, "Err": err})
}

func (s *Server) thumbnail(w http.ResponseWriter, r *http.Request, id string) {
	png, ok := s.o.Thumbs.Get(id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(png)
}

func (s *Server) statusPage(w http.ResponseWriter, r *http.Request, sess *session) {
	var st, pol any
	if s.o.Status != nil {
		st = generic(s.o.Status())
	}
	if s.o.Policy != nil {
		pol = generic(s.o.Policy())
	}
	s.render(w, "status", sess, map[string]any{"Title": "Status", "S": st, "Policy": policyTable(pol)})
}

// generic is v as JSON decodes it (maps, lists, strings, numbers).
func generic(v any) any {
	var out any
	b, _ := json.Marshal(v)
	json.Unmarshal(b, &out)
	return out
}

// decidedAt is when a's decision was made: its decision, or its expiry at
// the deadline; a pending one's request.
func decidedAt(a approvals.Approval) time.Time {
	switch {
	case !a.Decided.IsZero():
		return a.Decided
	case a.State == approvals.Expired:
		return a.Deadline
	}
	return a.Created
}

func asApprovals(v any) []approvals.Approval {
	l, _ := v.([]approvals.Approval)
	return l
}
