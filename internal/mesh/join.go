package mesh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nkeys"
)

// EnrolRequest is what `hostlink mesh join` sends the hub: the one-time
// code, and the machine's public key (its seed never leaves it).
type EnrolRequest struct {
	Code string `json:"code"`
	Key  string `json:"machine"`
	Name string `json:"name"`
}

// EnrolReply is the machine's credentials and what it may trust.
type EnrolReply struct {
	JWT     string            `json:"jwt"`
	Servers []string          `json:"servers"`
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels,omitempty"`
	// Callers are the callers the hub suggests the machine trust (its
	// gateway); `hostlink mesh join` names them as it trusts them.
	Callers []Caller `json:"callers"`
}

// Join enrols this machine with the hub at hubURL (its HTTP address, as
// `hostlink hub enrol` printed it) using code: it makes the machine's
// NKey, sends the public key, and returns the enrolment to store and the
// seed to keep in the credential store. http:// is for loopback only.
func Join(ctx context.Context, hubURL, code, name string) (*Enrolment, []byte, error) {
	u, err := url.Parse(hubURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, nil, fmt.Errorf("%q is not the hub's http(s):// address", hubURL)
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return nil, nil, fmt.Errorf("%s: the hub beyond loopback must be reached over https://", hubURL)
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, nil, err
	}
	key, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	body, _ := json.Marshal(EnrolRequest{Code: code, Key: key, Name: name})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(hubURL, "/")+"/enrol", bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("the hub did not answer: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("the hub refused: %s", strings.TrimSpace(string(b)))
	}
	var rep EnrolReply
	if err := json.Unmarshal(b, &rep); err != nil || rep.JWT == "" {
		return nil, nil, errors.New("the hub's answer does not decode")
	}
	return &Enrolment{Key: key, Name: rep.Name, Servers: rep.Servers, JWT: rep.JWT, Labels: rep.Labels, Callers: rep.Callers, Joined: time.Now().UTC()}, seed, nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	return strings.HasPrefix(h, "127.") || h == "::1"
}
