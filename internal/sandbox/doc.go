// Package sandbox confines the commands hostlink runs.
//
// A command confined in [Workdir] mode may write only in its working
// directory's workdir, a private temporary directory (its TMPDIR) and the
// extra writable paths of its [Policy]; it may read the system and the
// user's files except hostlink's own directories and the hidden paths; it
// has no network unless the policy allows it; and it cannot signal or
// trace processes outside its own tree.
//
// A Policy that asks for confinement this machine cannot give fails
// (SANDBOX_FAILED, [FailedError]): nothing runs unconfined unless its
// Policy says Off. The commands' temporary directories live below
// Policy.TmpRoot, one of hostlink's own directories, never under a shared
// name.
//
// How that is enforced depends on the OS, and [Probe] measures what is in
// force here rather than assuming it:
//
//   - Linux: the command is started by the fork server (hostlink itself,
//     re-executed in new user and mount namespaces: see package launcher),
//     from a thread it confines for that command alone, in new mount and
//     (without network) network namespaces. The thread covers hidden
//     paths and hostlink's directories with empty, unreadable mounts, gives
//     the command a private /tmp, applies Landlock at the highest ABI the
//     kernel offers (filesystem rules; TCP bind and connect from ABI 4;
//     abstract UNIX sockets and signals scoped from ABI 6), sets
//     no_new_privs, drops every capability and forks the command as
//     hostlink's child, so the process hostlink tracks, waits for and
//     reaps is the command itself. Without user namespaces a launcher per
//     command applies Landlock alone, with an allow-list of readable
//     roots, and the status reports the weaker mode.
//   - macOS: the command runs under sandbox-exec with a generated Seatbelt
//     profile of the same rules.
//   - Windows: the command runs with a low-integrity copy of hostlink's
//     token (inside the Job Object procs puts it in); its workdir and
//     private temporary directory are labelled low integrity so that it
//     may write there and nowhere else the user's processes write.
package sandbox
