package meshhub

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/private"
)

// CodeLifetime is how long an enrolment code can be used (once).
const CodeLifetime = 15 * time.Minute

// Enrolled is a machine the hub issued credentials to.
type Enrolled struct {
	Key      string            `json:"machine"`
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels,omitempty"`
	Enrolled time.Time         `json:"enrolled"`
}

// Enroller hands out one-time enrolment codes and turns a code and a
// machine key into the machine's credentials.
type Enroller struct {
	Keys    Keys
	Servers []string    // the URLs machines dial
	Gateway mesh.Caller // the gateway's caller key
	Dir     string      // holds machines.json
	Now     func() time.Time

	mu       sync.Mutex
	codes    map[string]pendingCode // sha256(code) → what it enrols
	failures []time.Time            // recent bad codes, for the rate limit
}

type pendingCode struct {
	name    string
	labels  map[string]string
	expires time.Time
}

func (e *Enroller) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// NewCode returns a code that enrols one machine as name with labels,
// for CodeLifetime.
func (e *Enroller) NewCode(name string, labels map[string]string) (string, time.Time) {
	var raw [10]byte
	rand.Read(raw[:])
	code := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:])
	exp := e.now().Add(CodeLifetime)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.codes == nil {
		e.codes = map[string]pendingCode{}
	}
	e.codes[hashCode(code)] = pendingCode{name: name, labels: labels, expires: exp}
	return code, exp
}

func hashCode(code string) string {
	h := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(code))))
	return string(h[:])
}

// errBadCode is every refusal of a code: unknown, used and expired alike.
var errBadCode = errors.New("the enrolment code is not valid (unknown, used or expired): make a new one with `hostlink hub enrol` on the hub")

// Enrol uses r's code once and issues the machine's credentials.
func (e *Enroller) Enrol(r mesh.EnrolRequest) (mesh.EnrolReply, error) {
	if !mesh.ValidMachine(r.Key) {
		return mesh.EnrolReply{}, errors.New("machine is not an NKey user public key")
	}
	e.mu.Lock()
	now := e.now()
	recent := e.failures[:0]
	for _, f := range e.failures {
		if now.Sub(f) < time.Minute {
			recent = append(recent, f)
		}
	}
	e.failures = recent
	if len(e.failures) >= 10 {
		e.mu.Unlock()
		return mesh.EnrolReply{}, errTooMany
	}
	h := hashCode(r.Code)
	pc, ok := e.codes[h]
	delete(e.codes, h)
	if !ok || now.After(pc.expires) {
		e.failures = append(e.failures, now)
		e.mu.Unlock()
		return mesh.EnrolReply{}, errBadCode
	}
	e.mu.Unlock()
	name := pc.name
	jwt, err := e.Keys.Machine(r.Key, name)
	if err != nil {
		return mesh.EnrolReply{}, err
	}
	if err := e.record(Enrolled{Key: r.Key, Name: name, Labels: pc.labels, Enrolled: now.UTC()}); err != nil {
		return mesh.EnrolReply{}, err
	}
	return mesh.EnrolReply{JWT: jwt, Servers: e.Servers, Name: name, Labels: pc.labels, Callers: []mesh.Caller{e.Gateway}}, nil
}

var errTooMany = errors.New("too many invalid enrolment codes in the last minute; wait")

// machinesFile lists the enrolled machines.
const machinesFile = "machines.json"

func (e *Enroller) record(m Enrolled) error {
	all, err := LoadEnrolled(e.Dir)
	if err != nil {
		return err
	}
	all = append(all, m)
	b, _ := json.MarshalIndent(all, "", "  ")
	if err := private.MkdirAll(e.Dir); err != nil {
		return err
	}
	return private.WriteFile(filepath.Join(e.Dir, machinesFile), append(b, '\n'))
}

// LoadEnrolled lists the machines the hub in dir enrolled, oldest first.
func LoadEnrolled(dir string) ([]Enrolled, error) {
	b, err := os.ReadFile(filepath.Join(dir, machinesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all []Enrolled
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", machinesFile, err)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Enrolled.Before(all[j].Enrolled) })
	return all, nil
}

// CodeRequest asks the running hub for an enrolment code.
type CodeRequest struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

// CodeReply is a new enrolment code.
type CodeReply struct {
	Code    string    `json:"code"`
	Expires time.Time `json:"expires_at"`
}

// Paths of the hub's HTTP endpoints beside the gateway's /mcp.
const (
	EnrolPath = "/enrol"
	CodesPath = "/admin/codes"
)

// Handlers serve the enrolment endpoint (the code is its credential)
// and the code endpoint (the hub's token, from loopback only).
func (e *Enroller) Handlers(mux *http.ServeMux, token string) {
	mux.HandleFunc("POST "+EnrolPath, func(w http.ResponseWriter, r *http.Request) {
		var req mesh.EnrolRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rep, err := e.Enrol(req)
		switch {
		case errors.Is(err, errTooMany):
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		case errors.Is(err, errBadCode):
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(rep)
	})
	mux.HandleFunc("POST "+CodesPath, func(w http.ResponseWriter, r *http.Request) {
		if why := mcpserve.LocalRequest(r); why != "" || !bearer(r, token) {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		var req CodeRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || req.Name == "" || len(req.Name) > 64 {
			http.Error(w, "a name (1 to 64 bytes) is required", http.StatusBadRequest)
			return
		}
		code, exp := e.NewCode(req.Name, req.Labels)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(CodeReply{Code: code, Expires: exp})
	})
}

func bearer(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && mcpserve.TokenMatches(got, token)
}

// Select returns the keys of the enrolled machines named (by name or
// key) or carrying every one of labels.
func Select(all []Enrolled, names []string, labels map[string]string) []string {
	var out []string
	for _, m := range all {
		match := len(names) == 0
		for _, n := range names {
			match = match || n == m.Name || n == m.Key
		}
		for k, v := range labels {
			match = match && m.Labels[k] == v
		}
		if match {
			out = append(out, m.Key)
		}
	}
	return out
}
