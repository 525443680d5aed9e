# shellcheck shell=bash
# Shared helpers for .ci/run and .ci/wine-test. Source, don't execute.

# Absolute repo root (parent of .ci/).
CI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CI_CACHE="${HOSTLINK_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hostlink-ci}"
mkdir -p "$CI_CACHE"

ci_log()  { printf '==> %s\n' "$*" >&2; }
ci_die()  { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# ci_quiet LOGFILE CMD...: run CMD with output to LOGFILE; print the log on failure.
ci_quiet() {
	local log="$1"; shift
	if ! "$@" >"$log" 2>&1; then
		local rc=$?
		printf 'ERROR: command failed (rc=%s): %s\n--- %s ---\n' "$rc" "$*" "$log" >&2
		tail -n 200 "$log" >&2
		printf -- '--- end of log ---\n' >&2
		return "$rc"
	fi
}

# ci_apt_ensure PKG...: install the Debian packages that are not installed yet.
# No apt-get at all when everything is present.
ci_apt_ensure() {
	local missing=() p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	ci_log "apt-get install ${missing[*]} (log: $CI_CACHE/apt.log)"
	local sudo=()
	[ "$(id -u)" -ne 0 ] && sudo=(sudo)
	: >"$CI_CACHE/apt.log"
	ci_quiet "$CI_CACHE/apt.log.update" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get update -q || return 1
	ci_quiet "$CI_CACHE/apt.log" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null || return 1
}

# Packages needed to run Windows test binaries under Wine.
CI_WINE_PKGS=(wine wine64 gcc-mingw-w64-x86-64)
