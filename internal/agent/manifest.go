package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// manifestSchema is the version of Manifest's layout.
const manifestSchema = 1

// Manifest is a task's immutable execution manifest: everything that
// decides what the runtime is asked to do and under which policy. It is
// stored, with its SHA-256, before the runtime starts, and the store
// refuses to change it afterwards.
type Manifest struct {
	Schema          int    `json:"schema"`
	TaskID          string `json:"task_id"`
	Created         string `json:"created"` // RFC 3339, UTC
	HostlinkVersion string `json:"hostlink_version"`
	Runtime         string `json:"runtime"`
	Model           string `json:"model,omitempty"`
	Workdir         string `json:"workdir"`
	Cwd             string `json:"cwd"`
	Access          Access `json:"access"`
	PromptSHA256    string `json:"prompt_sha256"`
	PromptBytes     int    `json:"prompt_bytes"`
	Policy          Policy `json:"policy"`
	PolicySHA256    string `json:"policy_fingerprint"`
}

// Policy is the policy in force for a task, fingerprinted into its
// manifest so that a later change of configuration is visible.
type Policy struct {
	AgentMode          string   `json:"agent_mode"`
	AllowedRuntimes    []string `json:"allowed_runtimes"`
	ApprovalTimeoutSec int      `json:"approval_timeout_seconds"`
	TurnTimeoutSec     int      `json:"turn_timeout_seconds"`
	MaxResultBytes     int64    `json:"max_result_bytes"`
}

// canonicalJSON encodes v with object keys sorted, no insignificant space
// and no HTML escaping, so equal values always hash alike.
func canonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil { // maps encode with sorted keys
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// fingerprint is the hex SHA-256 of v's canonical JSON.
func fingerprint(v any) (string, error) {
	b, err := canonicalJSON(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// seal fills in the policy fingerprint and returns the manifest's canonical
// JSON and its SHA-256.
func (m *Manifest) seal() (canon []byte, sum string, err error) {
	m.Schema = manifestSchema
	if m.PolicySHA256, err = fingerprint(m.Policy); err != nil {
		return nil, "", err
	}
	if canon, err = canonicalJSON(m); err != nil {
		return nil, "", err
	}
	h := sha256.Sum256(canon)
	return canon, hex.EncodeToString(h[:]), nil
}
