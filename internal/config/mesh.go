package config

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/hostlink/hostlink/internal/policy"
)

// Mesh configures this machine as an executor on a hostlink mesh (a NATS
// bus; see package mesh): off until the local user enables it, and
// nothing on the mesh can change any of it.
type Mesh struct {
	Enabled bool `toml:"enabled"`
	// Servers are the bus's URLs (nats:// or tls://); none means those
	// `hostlink mesh join` stored.
	Servers []string `toml:"servers"`
	// CA is a PEM file of the authorities a TLS bus must chain to.
	CA string `toml:"ca"`
	// Name is the machine's name in the fleet; "" is the host name.
	Name string `toml:"name"`
	// Classes are the policy classes callers over the mesh may use at
	// all (the policy's modes still apply within them). nil: read-only
	// files (files_read); an empty list: none.
	Classes []string `toml:"classes"`
	// MaxConcurrent bounds the mesh calls running at once.
	MaxConcurrent int `toml:"max_concurrent"`
	// PublishApprovals lets the machine publish what an approval asks
	// to the hub, so that a gateway can tell where to decide it.
	PublishApprovals bool `toml:"publish_approvals"`
	// ExportAudit copies each audit record to the hub's audit stream.
	ExportAudit bool `toml:"export_audit"`
}

// DefaultMeshClasses are the classes offered over the mesh by default.
var DefaultMeshClasses = []string{string(policy.FilesRead)}

func (c *Config) fillMeshDefaults() {
	if c.Mesh.Classes == nil {
		c.Mesh.Classes = slices.Clone(DefaultMeshClasses)
	}
	setIfZero(&c.Mesh.MaxConcurrent, 16)
}

// MeshClasses are [mesh] classes as policy classes.
func (c *Config) MeshClasses() []policy.Class {
	out := []policy.Class{}
	for _, k := range c.Mesh.Classes {
		out = append(out, policy.Class(k))
	}
	return out
}

func (c *Config) meshProblems() []problem {
	var probs []problem
	m := c.Mesh
	for i, k := range m.Classes {
		if !slices.Contains(policy.Classes, policy.Class(k)) {
			probs = append(probs, keyProblem(fmt.Sprintf("mesh.classes[%d]", i), "%q is not a policy class (%v)", k, policy.Classes))
		}
	}
	for i, s := range m.Servers {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
			probs = append(probs, keyProblem(fmt.Sprintf("mesh.servers[%d]", i), "%q is not a nats:// or tls:// URL", s))
		}
	}
	if m.MaxConcurrent < 1 || m.MaxConcurrent > 1024 {
		probs = append(probs, keyProblem("mesh.max_concurrent", "%d is out of range: must be 1 to 1024", m.MaxConcurrent))
	}
	return probs
}
