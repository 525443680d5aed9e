package console

import (
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// scopeChoice is one way an approval can be granted, as its card offers
// it: once, or a grant that lets later actions it covers run unasked.
type scopeChoice struct {
	Scope approvals.Scope
	Label string
	// What extra the user sets: "minutes", "path" or "argv".
	Input string
	// Path is the default directory (ScopePath); Prefixes the argv
	// prefixes to pick from (ScopeArgvPrefix), shortest first.
	Path     string
	Prefixes []string
}

// scopeChoices are the scopes that fit a (the broker refuses the others).
func scopeChoices(a approvals.Approval) []scopeChoice {
	act := a.Action
	out := []scopeChoice{{Scope: approvals.ScopeOnce, Label: "once: this exact action"}}
	if act.Session != "" && !a.SessionEnded { // an ended session is granted nothing
		out = append(out, scopeChoice{Scope: approvals.ScopeSession, Label: "this session: " + act.Class + " from this client until it disconnects"})
	}
	if len(act.Targets) == 0 {
		return out
	}
	wd := act.Targets[0].Workdir
	out = append(out, scopeChoice{Scope: approvals.ScopeClass, Label: act.Class + " in workdir " + wd + " from any client for", Input: "minutes"})
	if act.Class == "files_write" {
		dir := path.Dir(act.Targets[0].Rel)
		if r := act.Targets[0].Real; r != "" {
			dir = path.Dir(r)
		}
		// A target at the workdir's root has no directory below the
		// workdir to offer: writes anywhere in it are the class scope
		// above, with its window.
		if dir != "." {
			out = append(out, scopeChoice{Scope: approvals.ScopePath, Label: "writes in workdir " + wd + " below (not the directory itself)", Input: "path", Path: dir})
		}
	}
	if act.CommandLine != "" && !act.HasEnv {
		out = append(out, scopeChoice{Scope: approvals.ScopeCommand, Label: "this exact command line in workdir " + wd})
	}
	if len(act.Argv) > 0 && !act.HasEnv {
		c := scopeChoice{Scope: approvals.ScopeArgvPrefix, Label: "commands in workdir " + wd + " starting with", Input: "argv"}
		for n := 1; n <= len(act.Argv); n++ {
			c.Prefixes = append(c.Prefixes, quoteArgv(act.Argv[:n]))
		}
		out = append(out, c)
	}
	return out
}

// quoteArgv shows an argv as words, quoting the ones a reader could
// misread (empty, or holding spaces or quotes).
func quoteArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") {
			a = strconv.Quote(a)
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}

// decision reads a decision from a decide form: approve or deny and, for
// an approval, its scope and the scope's settings.
func (s *Server) decision(r *http.Request, sess *session, a *approvals.Approval) (approvals.Decision, string) {
	// The console is where the person decides: under confirm_in_person
	// its sessions come only from links the daemon opened in the browser
	// itself (daemon.ConsoleLogin), never from one a program was given.
	d := approvals.Decision{By: s.decider(r, sess), Via: audit.Console, Person: true}
	switch r.PostFormValue("decision") {
	case "approve":
		d.Approve = true
	case "deny":
		return d, ""
	default:
		return d, "decision must be approve or deny"
	}
	d.Scope = approvals.Scope(r.PostFormValue("scope"))
	if d.Scope == approvals.ScopeOnce {
		d.Scope = ""
	}
	switch d.Scope {
	case approvals.ScopeClass:
		n, err := strconv.Atoi(r.PostFormValue("minutes"))
		if err != nil {
			return d, "minutes must be a number"
		}
		d.Minutes = n
	case approvals.ScopePath:
		d.Path = strings.TrimSpace(r.PostFormValue("path"))
	case approvals.ScopeArgvPrefix:
		n, err := strconv.Atoi(r.PostFormValue("argv_n"))
		if a == nil || err != nil || n < 1 || n > len(a.Action.Argv) {
			return d, "pick how much of the command the grant covers"
		}
		d.ArgvPrefix = a.Action.Argv[:n]
	}
	return d, ""
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request, sess *session, id string) {
	if _, err := s.o.Broker.Revoke(id, s.decider(r, sess), audit.Console); err != nil {
		http.Error(w, textsafe.Line(err.Error()), http.StatusConflict)
		return
	}
	http.Redirect(w, r, Prefix+"approvals#grants", http.StatusSeeOther)
}

// saveGrant shows the TOML that saving a grant writes (GET) or writes it
// and reloads the configuration (POST), through Options.SaveGrant.
func (s *Server) saveGrant(w http.ResponseWriter, r *http.Request, sess *session, id string) {
	if s.o.SaveGrant == nil {
		http.NotFound(w, r)
		return
	}
	g, ok := s.o.Broker.Grant(id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	apply := r.Method == http.MethodPost
	res, err := s.o.SaveGrant(id, apply, s.decider(r, sess))
	data := map[string]any{"Title": "Save grant " + id, "G": g, "R": res, "Applied": apply && err == nil}
	if err != nil {
		data["Err"] = err.Error()
	}
	s.render(w, "savegrant", sess, data)
}

func (s *Server) approvalImage(w http.ResponseWriter, r *http.Request, id string) {
	png, ok := s.o.Broker.Image(id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(png)
}
