#!/bin/sh
# Install hostlink on Linux or macOS, without root. `sh install.sh --help`
# (or `curl -fsSL .../install.sh | sh -s -- --help`) says how; README.md's
# Install section says what this script trusts and how to verify it first.
#
# It checks the signature on the release's SHA256SUMS with the hostlink
# release key below (refusing to go on without ssh-keygen unless told so,
# loudly), then the archive's checksum, and installs PREFIX/bin/hostlink,
# its shell completions and man page: all of them, or none.
set -eu

# The hostlink release key (packaging/keys/allowed_signers; docs/RELEASING.md).
RELEASE_SIGNER='release@hostlink namespaces="hostlink-release" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK5bGQVtTS2y6F3pzGxV0iS2Wyik6+hyDsicDKkpjtrz'
REPO_URL='https://github.com/hostlink/hostlink'

usage() {
	cat <<'EOF'
Install hostlink on Linux or macOS, without root:

  curl -fsSL https://github.com/hostlink/hostlink/releases/latest/download/install.sh | sh
  curl -fsSL .../install.sh | sh -s -- --prefix /opt/hostlink     # with options
  sh install.sh --version 1.2.3                                  # a downloaded copy

It picks the archive for this OS and architecture from the release's
SHA256SUMS, verifies the signature on SHA256SUMS with the hostlink release
key (ssh-keygen from OpenSSH 8.1 or newer), checks the archive against it,
and installs PREFIX/bin/hostlink, its shell completions and its man page:
all of them or, on any failure, none. Running it again installs the same
release again, or does nothing when that release is already there.

Options (flags, or the environment variables in brackets):
  --version X.Y.Z   the release to install [HOSTLINK_VERSION] (default: the latest);
                    with --base-url, the release that URL must hold
  --prefix DIR      install DIR/bin/hostlink [HOSTLINK_PREFIX] (default: ~/.local)
  --base-url URL    where the release's files are [HOSTLINK_BASE_URL]
                    (default: the GitHub release of --version)
  --allowed-signers FILE
                    verify SHA256SUMS.sig with the keys in FILE (ssh-keygen's
                    allowed-signers format) instead of the hostlink release key
                    [HOSTLINK_ALLOWED_SIGNERS]
  --insecure-skip-signature
                    install without verifying the signature on SHA256SUMS.
                    The checksum then comes from the same place as the archive
                    and proves nothing about who made it. Only for a machine
                    that cannot have ssh-keygen; prefer installing OpenSSH.
  -h, --help        print this help
EOF
}

version="${HOSTLINK_VERSION:-}"
prefix="${HOSTLINK_PREFIX:-}"
base_url="${HOSTLINK_BASE_URL:-}"
signers="${HOSTLINK_ALLOWED_SIGNERS:-}"
verify_sig=1

say() { printf '%s\n' "$*"; }
die() {
	printf 'hostlink install: %s\n' "$*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case "$1" in
	--version) [ $# -ge 2 ] || die "--version needs a value"; version="$2"; shift 2 ;;
	--version=*) version="${1#*=}"; shift ;;
	--prefix) [ $# -ge 2 ] || die "--prefix needs a value"; prefix="$2"; shift 2 ;;
	--prefix=*) prefix="${1#*=}"; shift ;;
	--base-url) [ $# -ge 2 ] || die "--base-url needs a value"; base_url="$2"; shift 2 ;;
	--base-url=*) base_url="${1#*=}"; shift ;;
	--allowed-signers) [ $# -ge 2 ] || die "--allowed-signers needs a value"; signers="$2"; shift 2 ;;
	--allowed-signers=*) signers="${1#*=}"; shift ;;
	--insecure-skip-signature) verify_sig=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done

version="${version#v}"
case "$version" in
*[!0-9A-Za-z.+-]*) die "--version $version is not a release version (X.Y.Z)" ;;
esac
if [ -z "$base_url" ]; then
	if [ -n "$version" ]; then
		base_url="$REPO_URL/releases/download/v$version"
	else
		base_url="$REPO_URL/releases/latest/download"
	fi
fi
base_url="${base_url%/}"
if [ -z "$prefix" ]; then
	[ -n "${HOME:-}" ] || die "HOME is not set; give --prefix DIR"
	prefix="$HOME/.local"
fi
if [ -n "$signers" ] && [ ! -r "$signers" ]; then
	die "cannot read the allowed-signers file $signers"
fi

# ---------------------------------------------------------------- platform
case "$(uname -s)" in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) die "this script installs on Linux and macOS; on Windows use Scoop or winget (see $REPO_URL#install)" ;;
esac
case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) die "no hostlink release for the $(uname -m) architecture (there are amd64 and arm64)" ;;
esac
# A shell translated by Rosetta reports x86_64 on an Apple silicon Mac.
if [ "$os" = darwin ] && [ "$arch" = amd64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
	arch=arm64
fi

# ---------------------------------------------------------------- tools
if command -v curl >/dev/null 2>&1; then
	fetch() { curl -fsSL --proto '=http,https' -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
	fetch() { wget -q -O "$2" "$1"; }
else
	die "neither curl nor wget is installed"
fi
if command -v sha256sum >/dev/null 2>&1; then
	sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
	sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
	die "neither sha256sum nor shasum is installed: cannot check the download"
fi
if [ "$verify_sig" = 1 ] && ! command -v ssh-keygen >/dev/null 2>&1; then
	die "ssh-keygen is not installed, so the signature on the release cannot be verified: not installing.
Install OpenSSH's ssh-keygen (8.1 or newer) and run this again:
  Debian, Ubuntu: apt install openssh-client    Fedora, RHEL: dnf install openssh
  Alpine: apk add openssh-keygen                 Arch: pacman -S openssh
(--insecure-skip-signature installs without it, trusting whoever served the download.)"
fi

# ---------------------------------------------------------------- cleanup
# Everything is downloaded into $tmp and staged next to its destination;
# nothing replaces an installed file until every file is staged. On any
# exit before the end (an error or a signal: HUP when the terminal goes,
# PIPE when the output's reader does) the staged files go, files already
# put in place are put back as they were, and $tmp goes.
tmp="$(mktemp -d 2>/dev/null || mktemp -d -t hostlink)"
committed=0
cleanup() {
	if [ "$committed" = 0 ] && [ -f "$tmp/placed" ]; then
		# Each file was listed before it moved: its old copy goes back; a
		# new file whose stage is gone (moved in) goes.
		while IFS= read -r f; do
			if [ -e "$f.old.$$" ]; then
				mv -f "$f.old.$$" "$f" 2>/dev/null || true
			elif [ ! -e "$f.new.$$" ]; then
				rm -f "$f"
			fi
		done <"$tmp/placed"
	fi
	if [ -f "$tmp/staged" ]; then
		while IFS= read -r f; do rm -f "$f.new.$$"; done <"$tmp/staged"
	fi
	if [ -f "$tmp/madedirs" ]; then
		# Deepest first; rmdir leaves any directory that is not empty.
		sort -r "$tmp/madedirs" | while IFS= read -r d; do rmdir "$d" 2>/dev/null || true; done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM

# ---------------------------------------------------------------- SHA256SUMS
fetch "$base_url/SHA256SUMS" "$tmp/SHA256SUMS" || die "could not download $base_url/SHA256SUMS"
if [ "$verify_sig" = 1 ]; then
	fetch "$base_url/SHA256SUMS.sig" "$tmp/SHA256SUMS.sig" || die "could not download $base_url/SHA256SUMS.sig"
	if [ -n "$signers" ]; then
		keyname="the key in $signers (--allowed-signers), not the hostlink release key"
	else
		signers="$tmp/allowed_signers"
		printf '%s\n' "$RELEASE_SIGNER" >"$signers"
		keyname="the hostlink release key"
	fi
	if ! ssh-keygen -Y verify -f "$signers" -I release@hostlink -n hostlink-release \
		-s "$tmp/SHA256SUMS.sig" <"$tmp/SHA256SUMS" >"$tmp/verify.log" 2>&1; then
		# OpenSSH before 8.1 has no -Y: its getopt says so ("unknown",
		# "invalid" or "illegal option -- Y").
		if grep -q "option -- '\{0,1\}Y" "$tmp/verify.log"; then
			die "this ssh-keygen ($(ssh -V 2>&1 || echo 'OpenSSH before 8.1')) is too old to verify signatures: it has no -Y, which OpenSSH 8.1 added. Not installing; upgrade OpenSSH and run this again."
		fi
		die "the signature on SHA256SUMS does not verify with $keyname: not installing ($(cat "$tmp/verify.log"))"
	fi
	# "Good "hostlink-release" signature for release@hostlink with ED25519 key SHA256:..."
	key="$(sed -n 's/^Good .* with \(.* key [^ ]*\).*/\1/p' "$tmp/verify.log" | head -n 1)"
	say "Signature on SHA256SUMS: good, by ${key:-a key} ($keyname)"
else
	say "WARNING: --insecure-skip-signature: the signature on SHA256SUMS is NOT verified." >&2
	say "WARNING: the checksums come from $base_url, like the archive: they show the download is whole, not who made it." >&2
fi

# The archive for this platform, as SHA256SUMS names it: of --version
# when it is given, else the one there is.
archive="$(awk -v suffix="_${os}_${arch}.tar.gz" -v want="${version:+hostlink_${version}_${os}_${arch}.tar.gz}" '
	{ name = $2; sub(/^\*/, "", name) }
	name ~ /^hostlink_/ && substr(name, length(name) - length(suffix) + 1) == suffix && (want == "" || name == want) { print name; exit }
' "$tmp/SHA256SUMS")"
if [ -z "$archive" ]; then
	[ -n "$version" ] && die "the release at $base_url has no hostlink $version for $os/$arch (SHA256SUMS lists: $(awk '{ printf "%s ", $2 }' "$tmp/SHA256SUMS"))"
	die "the release at $base_url has no archive for $os/$arch"
fi
case "$archive" in
*/* | .*) die "SHA256SUMS names an unexpected file: $archive" ;;
esac
want="$(awk -v f="$archive" '{ name = $2; sub(/^\*/, "", name) } name == f { print $1; exit }' "$tmp/SHA256SUMS")"

# ---------------------------------------------------------------- archive
say "Downloading $archive"
fetch "$base_url/$archive" "$tmp/$archive" || die "could not download $base_url/$archive"
got="$(sha256 "$tmp/$archive")"
[ "$got" = "$want" ] || die "checksum mismatch for $archive: SHA256SUMS says $want, the download is $got; not installing"
say "Checksum of $archive: good"
mkdir "$tmp/x"
tar -xzf "$tmp/$archive" -C "$tmp/x" || die "could not unpack $archive"
[ -f "$tmp/x/hostlink" ] || die "$archive holds no hostlink binary"

# ---------------------------------------------------------------- install
# stage SRC DST MODE: copy SRC next to DST as DST.new.$$, unless DST already
# has its content.
mkdirs() {
	[ -d "$1" ] && return 0
	mkdirs "$(dirname "$1")" || return 1
	mkdir "$1" 2>/dev/null || [ -d "$1" ] || return 1
	printf '%s\n' "$1" >>"$tmp/madedirs"
}
stage() {
	[ -f "$2" ] && cmp -s "$1" "$2" && return 0
	[ -d "$2" ] && die "$2 is a directory; not installing"
	mkdirs "$(dirname "$2")" || die "cannot create $(dirname "$2"); nothing was installed"
	printf '%s\n' "$2" >>"$tmp/staged"
	{ cp "$1" "$2.new.$$" && chmod "$3" "$2.new.$$"; } 2>/dev/null || die "cannot write $2; nothing was installed"
}
bin="$prefix/bin/hostlink"
share="$prefix/share"
stage "$tmp/x/hostlink" "$bin" 755
for f in "completions/hostlink.bash:bash-completion/completions/hostlink" \
	"completions/hostlink.zsh:zsh/site-functions/_hostlink" \
	"completions/hostlink.fish:fish/vendor_completions.d/hostlink.fish" \
	"manpages/hostlink.1.gz:man/man1/hostlink.1.gz"; do
	if [ -f "$tmp/x/${f%%:*}" ]; then stage "$tmp/x/${f%%:*}" "$share/${f#*:}" 644; fi
done

# Put every staged file in place, keeping what it replaces until all are.
changed=0
if [ -f "$tmp/staged" ]; then
	while IFS= read -r f; do
		printf '%s\n' "$f" >>"$tmp/placed"
		if [ -e "$f" ]; then
			mv -f "$f" "$f.old.$$" || die "cannot replace $f; nothing was installed"
		fi
		mv -f "$f.new.$$" "$f" || die "cannot replace $f; nothing was installed"
	done <"$tmp/staged"
	committed=1
	while IFS= read -r f; do rm -f "$f.old.$$"; done <"$tmp/placed"
	changed=1
fi
committed=1

release="${archive#hostlink_}"
release="${release%_"${os}"_"${arch}".tar.gz}"
if [ "$changed" = 1 ]; then
	say "Installed hostlink $release ($os/$arch) as $bin"
else
	say "hostlink $release ($os/$arch) is already installed as $bin"
fi

case ":${PATH:-}:" in
*":$prefix/bin:"*) run=hostlink ;;
*)
	run="$bin"
	say ""
	say "$prefix/bin is not on your PATH; add it (e.g. in ~/.profile):"
	say "  export PATH=\"$prefix/bin:\$PATH\""
	;;
esac
say ""
say "Next:"
say "  $run serve      # run hostlink now (Ctrl-C stops it)"
say "  $run install    # start it at every login"
say "  $run update     # later: install the newest release, verified the same way"
