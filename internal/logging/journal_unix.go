//go:build unix

package logging

import (
	"fmt"
	"os"
	"syscall"
)

// IsJournal reports whether stderr is the journal stream systemd named in
// JOURNAL_STREAM ("device:inode"), so a child that merely inherited the
// variable with another stderr does not count.
func IsJournal(journalStream string, stderr *os.File) bool {
	if journalStream == "" {
		return false
	}
	fi, err := stderr.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return journalStream == fmt.Sprintf("%d:%d", uint64(st.Dev), uint64(st.Ino))
}
