// Package update moves a hostlink installation to another release, and
// checks whether there is a newer one.
//
// A release is a directory of files (GitHub's release downloads, or a
// mirror): SHA256SUMS, its SSH signature SHA256SUMS.sig (OpenSSH's SSHSIG
// format, namespace "hostlink-release", as `ssh-keygen -Y sign` makes it)
// and the archives SHA256SUMS lists. Fetch verifies the signature with the
// release key built into this binary (allowed_signers, a copy of
// packaging/keys/allowed_signers) before it believes anything SHA256SUMS
// says, including which version the release is; Install then downloads the
// archive for this OS and architecture, checks it against SHA256SUMS, runs
// the new binary's `version` to see that it runs here and is that release,
// and puts it in place of the running binary with one rename.
//
// Install refuses what a package manager installed (Managed says which one
// and the command that updates it): the manager's database would no longer
// match the file. Restart restarts a daemon its service manager runs, so
// that it runs the new binary.
//
// The update check (Checker) fetches the latest release's SHA256SUMS and
// signature, nothing else, and sends nothing about this machine: no version,
// no identifier, a fixed User-Agent.
package update
