// Package lease holds hostlink's cross-process locks on lock files in its
// state directory, and the per-workdir writer lease built on them.
//
// A [Lock] is an advisory whole-file lock, exclusive or shared, taken
// without waiting: flock(2) on Unix, LockFileEx on Windows. The OS releases
// it when the holder's file handle closes, including when the holder dies,
// so a lock can never outlive its process.
//
// [Workdirs] keys leases by workdir alias (never by a numeric slot). An
// agent turn that may write holds the workdir's lease exclusively for the
// whole turn; hostlink's own mutations take it shared for the length of one
// mutation, so they run beside each other but never beside an agent writer,
// and fail fast with WORKDIR_BUSY instead of waiting. Beside the lock, a
// persistent active-task guard file records the turn in progress; it is
// written before the turn starts and removed only after cleanup. A guard
// with no live lease behind it means its holder died mid-turn, and the
// workdir reports WORKDIR_RECOVERY_REQUIRED until the task is reconciled or
// the user clears it. A live lease always takes precedence over a guard.
package lease
