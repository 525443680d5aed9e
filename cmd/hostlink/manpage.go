package main

import "github.com/hostlink/hostlink/internal/manpage"

// manDescription and manSections are hostlink(1)'s text around the
// commands, which come from the command line itself.
const manDescription = `hostlink is one small daemon on your own computer that lets AI agents act on it, safely and visibly: files in workdirs through a jail nothing escapes, commands with a scrubbed environment, the desktop, and agent tasks, every call audited, over MCP and an outbound platform link.

Start it with hostlink serve, or at every login with hostlink install; hostlink status and hostlink doctor say how it is doing.`

var manSections = []manpage.Section{
	{Title: "Files", Text: `config.toml in the per-OS configuration directory (hostlink info prints it; ~/.config/hostlink on Linux): every key and its default are in the defaults hostlink documents (README, "Configuration").

The state, log and audit directories: hostlink info prints them. HOSTLINK_HOME puts them all below one directory.`},
	{Title: "Environment", Text: `HOSTLINK_HOME: one directory for hostlink's configuration, state, logs and audit log.

HOSTLINK_PLATFORM_TOKEN: the platform bearer token, when no token file is configured.

KEYCHAIN_PASSPHRASE: the passphrase of the encrypted credential file, where no OS keychain is available.`},
	{Title: "Updates", Text: `hostlink update installs the latest release in place of the running binary after verifying the release's signed SHA256SUMS with the hostlink release key built into it; hostlink update --check only says whether there is one. A hostlink installed by a package manager (apt, dnf, Homebrew, Scoop, winget) is updated by that manager.`},
	{Title: "See also", Text: `https://github.com/hostlink/hostlink`},
}
