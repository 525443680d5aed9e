# shellcheck shell=bash
# Shared helpers for .ci/run and .ci/wine-test. Source, don't execute.

# Absolute repo root (parent of .ci/).
CI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Logs of quiet install steps.
CI_CACHE="${HOSTLINK_CI_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/hostlink-ci}"
mkdir -p "$CI_CACHE"

# Packages needed to build the shim DLL and run Windows test binaries under Wine.
CI_WINE_PKGS=(wine wine64 gcc-mingw-w64-x86-64)

ci_log() { printf '==> %s\n' "$*" >&2; }
ci_die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# ci_quiet LOGFILE CMD...: run CMD with its output in LOGFILE; print the log
# tail and return CMD's status if it fails.
ci_quiet() {
	local log="$1" rc=0
	shift
	"$@" >"$log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		printf 'ERROR: command failed (rc=%s): %s\n--- %s ---\n' "$rc" "$*" "$log" >&2
		tail -n 200 "$log" >&2
		printf -- '--- end of log ---\n' >&2
	fi
	return "$rc"
}

# ci_apt_ensure PKG...: install the Debian packages that are not installed yet.
# Runs no apt-get at all when everything is present.
ci_apt_ensure() {
	local missing=() p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	ci_log "apt-get install ${missing[*]} (log: $CI_CACHE/apt.log)"
	local apt=()
	[ "$(id -u)" -ne 0 ] && apt=(sudo)
	apt+=(env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
	# A failed update is not fatal by itself: the install below may still work.
	ci_quiet "$CI_CACHE/apt-update.log" "${apt[@]}" update </dev/null ||
		ci_log "apt-get update failed; trying the install anyway"
	ci_quiet "$CI_CACHE/apt.log" "${apt[@]}" install -y --no-install-recommends "${missing[@]}" </dev/null
}
