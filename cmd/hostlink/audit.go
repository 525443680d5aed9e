package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/textsafe"
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
	rep, err := audit.Verify(dirs.Audit, dirs.AuditHead(), key)
	for _, g := range rep.Gaps {
		if g != rep.Failure { // the error names that one
			fmt.Fprintf(os.Stderr, "also: %v\n", g)
		}
	}
	if err != nil {
		return err
	}
	fmt.Printf("audit log OK: %d records (seq %d-%d) in %d file(s): %s\n",
		rep.Records, rep.FirstSeq, rep.LastSeq, len(rep.Files), strings.Join(rep.Files, ", "))
	if rep.FirstSeq > 1 {
		fmt.Printf("note: records before seq %d were removed by retention (audit.max_total_bytes); a signed checkpoint accounts for them\n", rep.FirstSeq)
	}
	return nil
}

type auditTailCmd struct {
	N    int  `short:"n" default:"20" help:"Number of records."`
	JSON bool `help:"Print each record as one JSON object per line, with the field names of the log on disk."`
}

func (a *auditTailCmd) Run() error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	return a.print(os.Stdout, dirs.Audit)
}

// print writes the last records of the log in dir to w.
func (a *auditTailCmd) print(w io.Writer, dir string) error {
	lines, err := audit.Tail(dir, a.N)
	if err != nil {
		return err
	}
	recorded := audit.Recorded(lines)
	for i, l := range lines {
		if a.JSON {
			b, err := json.Marshal(l)
			if err != nil {
				return err
			}
			if _, err := w.Write(textsafe.JSON(append(b, '\n'))); err != nil {
				return err
			}
			continue
		}
		printAuditLine(w, l, recorded[i])
	}
	return nil
}

// printAuditLine shows one record with the time it was recorded (see
// audit.Recorded: the times then follow the records' order, as the start
// times of calls that waited do not). Paths and workdirs are what a
// caller asked for, so every field goes through textsafe.
func printAuditLine(w io.Writer, l audit.Line, recorded time.Time) {
	paths := make([]string, len(l.Paths))
	for i, p := range l.Paths {
		paths[i] = textsafe.Line(p)
	}
	fmt.Fprintf(w, "%6d %s %-10s %-22s %-26s %s %s\n", l.Seq, recorded.Local().Format(time.DateTime), textsafe.Line(string(l.Transport)),
		textsafe.Line(l.Op), textsafe.Line(l.Code), textsafe.Line(l.Workdir), strings.Join(paths, " "))
}
