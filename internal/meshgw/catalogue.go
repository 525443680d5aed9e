package meshgw

import (
	"errors"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/commands"
	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/ops"
)

// noAudit is the catalogue's auditor: the catalogue is never called.
type noAudit struct{}

func (noAudit) Check() error              { return errors.New("the gateway's catalogue runs nothing") }
func (noAudit) Append(audit.Record) error { return errors.New("the gateway's catalogue runs nothing") }

// Catalogue is every operation an executor may serve on the mesh, from
// the operations compiled into this hostlink (the same binary as the
// executors'): their names, schemas and result types. Their handlers are
// never called. Operations of capabilities an executor has off are
// listed too: that machine answers CAPABILITY_DISABLED, another may
// serve them.
func Catalogue() []*ops.Op {
	reg := ops.New(ops.Options{Audit: noAudit{}})
	files.Register(reg, nil)
	commands.Register(reg, nil)
	// Clipboard operations register only where the local user enabled
	// them, which the catalogue cannot know; they are not listed.
	desktop.Register(reg, &desktop.Service{})
	agent.Register(reg, nil)
	reg.Seal()
	return reg.OpsFor(audit.Mesh)
}
