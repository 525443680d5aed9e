package fakeruntime

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Version is the fake runtime's version, as initialize reports it.
const Version = "fake-1.0"

// Variables of the fake runtime's environment that tests set.
const (
	// InitGateEnv names a file: initialize answers once it exists (a
	// runtime that starts as slowly as a test wants).
	InitGateEnv = "HOSTLINK_FAKE_INIT_GATE"
	// LoggedOutEnv, set, makes the runtime report it is not logged in.
	LoggedOutEnv = "HOSTLINK_FAKE_LOGGED_OUT"
)

// Main runs the fake runtime on in and out until in ends, and returns the
// process's exit status.
func Main(in io.Reader, out io.Writer) int {
	s := &server{enc: json.NewEncoder(out), waiting: map[string]chan json.RawMessage{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			continue
		}
		if m.Method == "" {
			s.answer(m)
			continue
		}
		s.handle(m)
	}
	// The client is gone: a running turn ends with the process, recorded
	// as interrupted.
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		t.sess.record(lastTurn{TurnID: t.id, Status: "interrupted"})
	}
	return 0
}

type server struct {
	mu      sync.Mutex
	enc     *json.Encoder
	sess    *session
	turn    *turn
	next    int
	waiting map[string]chan json.RawMessage
}

type session struct {
	file     sessionFile
	stateDir string
	mu       sync.Mutex
}

type turn struct {
	id        string
	sess      *session
	interrupt chan struct{}
	steer     chan string
	once      sync.Once
}

func (s *server) send(m any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.enc.Encode(m)
}

func (s *server) reply(id json.RawMessage, result any, err error) {
	if err != nil {
		s.send(message{ID: id, Error: &rpcError{Code: -32600, Message: err.Error()}})
		return
	}
	b, _ := json.Marshal(result)
	s.send(message{ID: id, Result: b})
}

func (s *server) notify(method string, params any) {
	b, _ := json.Marshal(params)
	s.send(message{Method: method, Params: b})
}

// ask sends a request to the client and waits for its answer or the turn's
// interrupt (nil then).
func (s *server) ask(t *turn, method string, params any) json.RawMessage {
	s.mu.Lock()
	s.next++
	id := "s" + strconv.Itoa(s.next)
	ch := make(chan json.RawMessage, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	b, _ := json.Marshal(params)
	rawID, _ := json.Marshal(id)
	s.send(message{ID: rawID, Method: method, Params: b})
	select {
	case res := <-ch:
		return res
	case <-t.interrupt:
		s.mu.Lock()
		delete(s.waiting, id)
		s.mu.Unlock()
		s.notify("request/withdrawn", map[string]string{"id": id})
		return nil
	}
}

func (s *server) answer(m message) {
	var id string
	json.Unmarshal(m.ID, &id)
	s.mu.Lock()
	ch := s.waiting[id]
	delete(s.waiting, id)
	s.mu.Unlock()
	if ch != nil {
		ch <- m.Result
	}
}

func (s *server) handle(m message) {
	switch m.Method {
	case "initialize":
		// A slow start, as long as the test wants it: until the gate file
		// exists.
		if gate := os.Getenv(InitGateEnv); gate != "" {
			for {
				if _, err := os.Stat(gate); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		s.reply(m.ID, map[string]any{"version": Version, "logged_in": os.Getenv(LoggedOutEnv) == "", "models": []map[string]any{
			{"id": "fake-small", "name": "Fake small", "default": true}, {"id": "fake-large", "name": "Fake large"}}}, nil)
	case "session/start":
		var p sessionParams
		json.Unmarshal(m.Params, &p)
		sess := &session{stateDir: p.StateDir, file: sessionFile{ID: "fs_" + rand.Text()[:12], Cwd: p.Cwd, Access: p.Access}}
		err := sess.save()
		if err == nil {
			s.mu.Lock()
			s.sess = sess
			s.mu.Unlock()
		}
		s.reply(m.ID, map[string]string{"session_id": sess.file.ID}, err)
	case "session/resume":
		var p sessionParams
		json.Unmarshal(m.Params, &p)
		sess, last, err := resume(p.StateDir, p.SessionID)
		if err == nil {
			s.mu.Lock()
			s.sess = sess
			s.mu.Unlock()
		}
		s.reply(m.ID, map[string]any{"session_id": p.SessionID, "last_turn": last}, err)
	case "turn/start":
		var p turnParams
		json.Unmarshal(m.Params, &p)
		s.mu.Lock()
		sess, busy := s.sess, s.turn != nil
		var t *turn
		if sess != nil && !busy {
			t = &turn{id: "ft_" + rand.Text()[:12], sess: sess, interrupt: make(chan struct{}), steer: make(chan string, 16)}
			s.turn = t
		}
		s.mu.Unlock()
		switch {
		case sess == nil:
			s.reply(m.ID, nil, errors.New("no session"))
		case busy:
			s.reply(m.ID, nil, errors.New("a turn is running"))
		default:
			sess.record(lastTurn{TurnID: t.id, Status: "running"})
			s.reply(m.ID, map[string]string{"turn_id": t.id}, nil)
			go s.run(t, p.Input)
		}
	case "turn/steer", "turn/interrupt":
		var p turnParams
		json.Unmarshal(m.Params, &p)
		s.mu.Lock()
		t := s.turn
		s.mu.Unlock()
		if t == nil || t.id != p.TurnID {
			s.reply(m.ID, nil, errors.New("no such turn running"))
			return
		}
		if m.Method == "turn/interrupt" {
			t.once.Do(func() { close(t.interrupt) })
		} else {
			t.steer <- p.Input
		}
		s.reply(m.ID, map[string]any{}, nil)
	default:
		s.reply(m.ID, nil, fmt.Errorf("unknown method %q", m.Method))
	}
}

// run executes a turn's script.
func (s *server) run(t *turn, script string) {
	result, status, failure := "done", "completed", ""
	n := 0
	item := func(kind, phase, text string, data map[string]any) string {
		n++
		id := t.id + "_i" + strconv.Itoa(n)
		s.notify("item", itemParams{TurnID: t.id, ItemID: id, Kind: kind, Phase: phase, Text: text, Data: data})
		return id
	}
	interrupted := func() bool {
		select {
		case <-t.interrupt:
			return true
		default:
			return false
		}
	}
	say := func(text string) {
		n++
		id := t.id + "_i" + strconv.Itoa(n)
		s.notify("item", itemParams{TurnID: t.id, ItemID: id, Kind: "agent_message", Phase: "started"})
		third := len(text) / 3
		for _, part := range []string{text[:third], text[third : 2*third], text[2*third:]} {
			s.notify("item", itemParams{TurnID: t.id, ItemID: id, Kind: "agent_message", Phase: "delta", Text: part})
		}
		s.notify("item", itemParams{TurnID: t.id, ItemID: id, Kind: "agent_message", Phase: "completed", Text: text})
	}
lines:
	for _, line := range strings.Split(script, "\n") {
		if interrupted() {
			status = "interrupted"
			break
		}
		select {
		case text := <-t.steer:
			item("user_message", "completed", "steered: "+text, nil)
		default:
		}
		verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch verb {
		case "":
		case "say":
			say(arg)
		case "items":
			k, _ := strconv.Atoi(arg)
			for i := range k {
				item("reasoning", "completed", "step "+strconv.Itoa(i+1), nil)
			}
		case "approve":
			id := item("command", "started", "", map[string]any{"command": arg})
			res := s.ask(t, "request/approval", requestParams{TurnID: t.id, ItemID: id, Summary: "run: " + arg,
				Detail: map[string]any{"command": arg, "cwd": t.sess.file.Cwd},
				Decisions: []json.RawMessage{json.RawMessage(`"accept"`), json.RawMessage(`"acceptForSession"`),
					json.RawMessage(`"decline"`), json.RawMessage(`"cancel"`),
					json.RawMessage(`{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["go","test"]}}`)}})
			if res == nil {
				status = "interrupted"
				break lines
			}
			var d struct {
				Decision json.RawMessage `json:"decision"`
			}
			json.Unmarshal(res, &d)
			item("command", "completed", "decision: "+string(d.Decision), nil)
		case "ask":
			res := s.ask(t, "request/question", requestParams{TurnID: t.id, Summary: arg,
				Questions: []question{{ID: "q1", Text: arg, Options: []string{"yes", "no"}, Other: true}}})
			if res == nil {
				status = "interrupted"
				break lines
			}
			var a struct {
				Answers map[string][]string `json:"answers"`
			}
			json.Unmarshal(res, &a)
			item("user_message", "completed", "answer: "+strings.Join(a.Answers["q1"], ","), nil)
		case "stubborn": // sleep, deaf to interrupts and steers
			ms, _ := strconv.Atoi(arg)
			time.Sleep(time.Duration(ms) * time.Millisecond)
		case "sleep":
			ms, _ := strconv.Atoi(arg)
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case text := <-t.steer:
				item("user_message", "completed", "steered: "+text, nil)
			case <-t.interrupt:
				status = "interrupted"
				break lines
			}
		case "write":
			rel, text, _ := strings.Cut(arg, " ")
			if t.sess.file.Access != "workspace-write" {
				status, failure = "failed", "the read-only sandbox refused to write "+rel
				break lines
			}
			p := filepath.Join(t.sess.file.Cwd, filepath.FromSlash(rel))
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				status, failure = "failed", err.Error()
				break lines
			}
			item("file_change", "completed", "wrote "+p, map[string]any{"path": p})
		case "path":
			item("agent_message", "completed", "looked at "+filepath.Join(os.TempDir(), "outside.txt")+" and "+filepath.Join(t.sess.file.Cwd, "inside.txt"), nil)
		case "crash":
			os.Exit(3)
		case "fail":
			status, failure = "failed", arg
			break lines
		case "result":
			result = arg
		case "bigresult":
			k, _ := strconv.Atoi(arg)
			var b strings.Builder
			for b.Len() < k {
				b.WriteString("héllo wörld ✓ ")
			}
			result = b.String()
		default:
			say(strings.TrimSpace(line))
		}
	}
	if status != "completed" {
		result = ""
	}
	t.sess.record(lastTurn{TurnID: t.id, Status: status, Result: result})
	s.mu.Lock()
	s.turn = nil
	s.mu.Unlock()
	s.notify("turn/completed", turnDone{TurnID: t.id, Status: status, Result: result, Error: failure})
}

func sessionPath(stateDir, id string) string {
	return filepath.Join(stateDir, "sessions", id+".json")
}

func (s *session) save() error {
	if err := os.MkdirAll(filepath.Join(s.stateDir, "sessions"), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(s.file)
	p := sessionPath(s.stateDir, s.file.ID)
	if err := os.WriteFile(p+".tmp", b, 0o600); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

// record sets the session's last turn and saves the session.
func (s *session) record(t lastTurn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.file.Turns); n > 0 && s.file.Turns[n-1].TurnID == t.TurnID {
		s.file.Turns[n-1] = t
	} else {
		s.file.Turns = append(s.file.Turns, t)
	}
	s.save()
}

// resume loads a session; a turn left running by a dead process is
// recorded, and reported, as interrupted.
func resume(stateDir, id string) (*session, *lastTurn, error) {
	if strings.ContainsAny(id, `/\.`) {
		return nil, nil, errors.New("bad session id")
	}
	b, err := os.ReadFile(sessionPath(stateDir, id))
	if err != nil {
		return nil, nil, fmt.Errorf("no session %s", id)
	}
	s := &session{stateDir: stateDir}
	if err := json.Unmarshal(b, &s.file); err != nil {
		return nil, nil, err
	}
	if n := len(s.file.Turns); n > 0 {
		last := s.file.Turns[n-1]
		if last.Status == "running" {
			last.Status = "interrupted"
			s.record(last)
		}
		return s, &last, nil
	}
	return s, nil, nil
}
