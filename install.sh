#!/bin/sh
# Install hostlink on Linux or macOS, without root:
#
#   curl -fsSL https://github.com/hostlink/hostlink/releases/latest/download/install.sh | sh
#
# It picks the archive for this OS and architecture from the release's
# SHA256SUMS, checks the signature on SHA256SUMS (when ssh-keygen is here)
# and the archive's checksum, and installs PREFIX/bin/hostlink with its
# shell completions. Running it again installs the same release again, or
# does nothing when that release is already there.
#
# Options (flags, or the environment variables in brackets):
#   --version X.Y.Z  the release to install [HOSTLINK_VERSION] (default: the latest)
#   --prefix DIR     install DIR/bin/hostlink [HOSTLINK_PREFIX] (default: ~/.local)
#   --base-url URL   where the release's files are [HOSTLINK_BASE_URL]
#                    (default: the GitHub release of --version)
#   --allowed-signers FILE  verify SHA256SUMS.sig with these keys instead of the
#                    release key below [HOSTLINK_ALLOWED_SIGNERS] (for testing)
#   --no-verify-signature  skip the signature check (the checksum is still checked)
set -eu

# The hostlink release key (packaging/keys/allowed_signers; docs/RELEASING.md).
RELEASE_SIGNER='release@hostlink namespaces="hostlink-release" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK5bGQVtTS2y6F3pzGxV0iS2Wyik6+hyDsicDKkpjtrz'
REPO_URL='https://github.com/hostlink/hostlink'

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
	--no-verify-signature) verify_sig=0; shift ;;
	-h | --help) sed -n '2,22p' "$0" 2>/dev/null || true; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done

version="${version#v}"
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

tmp="$(mktemp -d 2>/dev/null || mktemp -d -t hostlink)"
trap 'rm -rf "$tmp"' EXIT INT TERM

# ---------------------------------------------------------------- SHA256SUMS
fetch "$base_url/SHA256SUMS" "$tmp/SHA256SUMS" || die "could not download $base_url/SHA256SUMS"
if [ "$verify_sig" = 1 ]; then
	if command -v ssh-keygen >/dev/null 2>&1; then
		fetch "$base_url/SHA256SUMS.sig" "$tmp/SHA256SUMS.sig" || die "could not download $base_url/SHA256SUMS.sig"
		if [ -z "$signers" ]; then
			signers="$tmp/allowed_signers"
			printf '%s\n' "$RELEASE_SIGNER" >"$signers"
		fi
		ssh-keygen -Y verify -f "$signers" -I release@hostlink -n hostlink-release \
			-s "$tmp/SHA256SUMS.sig" <"$tmp/SHA256SUMS" >"$tmp/verify.log" 2>&1 ||
			die "the signature on SHA256SUMS does not verify with the hostlink release key: not installing ($(cat "$tmp/verify.log"))"
		say "Signature on SHA256SUMS: good (hostlink release key)"
	else
		say "Note: ssh-keygen is not installed, so the signature on SHA256SUMS is not checked (the checksum still is)"
	fi
fi

# The archive for this platform, as SHA256SUMS names it.
archive="$(awk -v suffix="_${os}_${arch}.tar.gz" '
	{ name = $2; sub(/^\*/, "", name) }
	name ~ /^hostlink_/ && substr(name, length(name) - length(suffix) + 1) == suffix { print name; exit }
' "$tmp/SHA256SUMS")"
[ -n "$archive" ] || die "the release at $base_url has no archive for $os/$arch"
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
# install_file SRC DST MODE: put SRC at DST atomically; say whether it changed.
changed=0
install_file() {
	if [ -f "$2" ] && cmp -s "$1" "$2"; then
		return 0
	fi
	mkdir -p "$(dirname "$2")" || die "cannot create $(dirname "$2")"
	cp "$1" "$2.tmp.$$" && chmod "$3" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2" || {
		rm -f "$2.tmp.$$"
		die "cannot write $2"
	}
	changed=1
}
bin="$prefix/bin/hostlink"
install_file "$tmp/x/hostlink" "$bin" 755
share="$prefix/share"
[ -f "$tmp/x/completions/hostlink.bash" ] && install_file "$tmp/x/completions/hostlink.bash" "$share/bash-completion/completions/hostlink" 644
[ -f "$tmp/x/completions/hostlink.zsh" ] && install_file "$tmp/x/completions/hostlink.zsh" "$share/zsh/site-functions/_hostlink" 644
[ -f "$tmp/x/completions/hostlink.fish" ] && install_file "$tmp/x/completions/hostlink.fish" "$share/fish/vendor_completions.d/hostlink.fish" 644

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
