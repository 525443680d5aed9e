package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/paths"
)

type auditCmd struct {
	Verify auditVerifyCmd `cmd:"" help:"Check the HMAC chain of every audit file; report the first line where it breaks."`
	Tail   auditTailCmd   `cmd:"" help:"Show the most recent audit records."`
}

// auditKey reads the existing key; verifying with a freshly made one would
// only report every line as tampered.
func auditKey() (paths.Dirs, []byte, error) {
	dirs, err := paths.Resolve()
	if err != nil {
		return dirs, nil, err
	}
	p := dirs.AuditKey()
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return dirs, nil, fmt.Errorf("no audit key at %s: hostlink has not run here yet", p)
	}
	key, err := audit.LoadOrCreateKey(p)
	return dirs, key, err
}

type auditVerifyCmd struct{}

func (auditVerifyCmd) Run() error {
	dirs, key, err := auditKey()
	if err != nil {
		return err
	}
	rep, err := audit.Verify(dirs.Audit, key)
	if err != nil {
		return err
	}
	if rep.Failure != nil {
		return rep.Failure
	}
	fmt.Printf("audit log OK: %d records (seq %d-%d) in %d file(s): %s\n",
		rep.Records, rep.FirstSeq, rep.LastSeq, len(rep.Files), strings.Join(rep.Files, ", "))
	if rep.FirstSeq > 1 {
		fmt.Printf("note: records before seq %d are not present (older files removed)\n", rep.FirstSeq)
	}
	return nil
}

type auditTailCmd struct {
	N    int  `short:"n" default:"20" help:"Number of records."`
	JSON bool `help:"Print the records as JSON lines."`
}

func (a *auditTailCmd) Run() error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	lines, err := audit.Tail(dirs.Audit, a.N)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if a.JSON {
			if err := printJSON(l); err != nil {
				return err
			}
			continue
		}
		fmt.Printf("%6d %s %-10s %-22s %-26s %s %s\n", l.Seq, l.Time.Local().Format(time.DateTime), l.Transport,
			l.Op, l.Code, l.Workdir, strings.Join(l.Paths, " "))
	}
	return nil
}
