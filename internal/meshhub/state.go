package meshhub

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hostlink/hostlink/internal/private"
)

// Files in the hub's state directory.
const (
	tokenFile   = "http.token"
	runningFile = "hub.json"
)

// Token is the hub's bearer token (the gateway's MCP, the code
// endpoint), made privately in dir on first use.
func Token(dir string) (string, error) {
	if err := private.MkdirAll(dir); err != nil {
		return "", err
	}
	p := filepath.Join(dir, tokenFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		var raw [32]byte
		rand.Read(raw[:])
		tok := base64.RawURLEncoding.EncodeToString(raw[:])
		return tok, private.WriteFile(p, []byte(tok+"\n"))
	}
	if err != nil {
		return "", err
	}
	if err := private.Check(p); err != nil {
		return "", fmt.Errorf("hub token %s: %w", p, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Running is what a running hub writes for the CLI: where it serves.
type Running struct {
	HTTP    string   `json:"http"`    // the gateway's and enrolment's base URL
	Servers []string `json:"servers"` // the bus
	PID     int      `json:"pid"`
}

// WriteRunning records r in dir.
func WriteRunning(dir string, r Running) error {
	b, _ := json.MarshalIndent(r, "", "  ")
	return private.WriteFile(filepath.Join(dir, runningFile), append(b, '\n'))
}

// ReadRunning reads what the hub in dir wrote when it started.
func ReadRunning(dir string) (Running, error) {
	var r Running
	b, err := os.ReadFile(filepath.Join(dir, runningFile))
	if errors.Is(err, os.ErrNotExist) {
		return r, errors.New("no hub has run here: start one with `hostlink hub serve`")
	}
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}
