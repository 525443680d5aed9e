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

# ci_wine_prepare: make Wine ready to run Go 1.26 Windows binaries, headless:
# the apt packages, a 64-bit prefix in $HOSTLINK_WINE_HOME/prefix (default
# ~/.cache/hostlink-wine) made once with `wineboot -i` and reporting Windows
# 10, and our bcryptprimitives.dll shim (.ci/wine/bcryptprimitives.c, see
# there for why), built with mingw, cached by source hash and copied into
# system32. It exports WINEPREFIX, WINEARCH, WINEDEBUG and WINEDLLOVERRIDES
# and sets WINE_HOME and wine_version. Used by .ci/wine-test and
# .ci/release-check.
ci_wine_prepare() {
	WINE_HOME="${HOSTLINK_WINE_HOME:-${HOME:-/root}/.cache/hostlink-wine}"
	export WINEPREFIX="$WINE_HOME/prefix"
	export WINEARCH=win64
	export WINEDEBUG=-all
	# No Mono/Gecko install prompts; no menu/desktop integration; our ProcessPrng
	# shim first (Wine 8 has no builtin bcryptprimitives; if a later Wine does,
	# ours still wins).
	export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d;bcryptprimitives=n,b"
	unset DISPLAY WAYLAND_DISPLAY
	mkdir -p "$WINE_HOME"

	# -- apt
	ci_apt_ensure "${CI_WINE_PKGS[@]}" || { ci_log "could not install ${CI_WINE_PKGS[*]}"; return 1; }
	command -v wine >/dev/null || { ci_log "wine not found after install"; return 1; }

	# -- shim DLL
	shim_src="$CI_ROOT/.ci/wine/bcryptprimitives.c"
	shim_def="$CI_ROOT/.ci/wine/bcryptprimitives.def"
	shim_flags=(-shared -O2 -s -Wall -Wextra -nostdlib -Wl,-e,DllMain)
	shim_libs=(-lkernel32 -ladvapi32)
	shim_hash="$( { cat "$shim_src" "$shim_def"; echo "${shim_flags[*]} ${shim_libs[*]}";
		x86_64-w64-mingw32-gcc --version | head -n1; } | sha256sum | cut -c1-16)"
	shim_dll="$WINE_HOME/dll/bcryptprimitives-$shim_hash.dll"
	if [ ! -s "$shim_dll" ]; then
		mkdir -p "$WINE_HOME/dll"
		ci_log "building bcryptprimitives.dll shim ($shim_hash)"
		ci_quiet "$WINE_HOME/dll/build.log" x86_64-w64-mingw32-gcc "${shim_flags[@]}" \
			-o "$shim_dll.tmp" "$shim_src" "$shim_def" "${shim_libs[@]}" || return 1
		mv -f "$shim_dll.tmp" "$shim_dll"
	fi

	# -- prefix
	wine_version="$(wine --version 2>/dev/null)"
	prefix_id="$wine_version; win10; v1" # bump to re-run init_prefix on existing prefixes
	stamp="$WINEPREFIX/.hostlink-prefix"
	sys32="$WINEPREFIX/drive_c/windows/system32"
	init_prefix() {
		local log="$WINE_HOME/wineboot.log" t0=$SECONDS
		if [ -f "$WINEPREFIX/system.reg" ]; then
			ci_log "updating Wine prefix $WINEPREFIX for $wine_version (log: $log)"
			ci_quiet "$log" timeout -k 10 300 wineboot -u </dev/null || return 1
		else
			rm -rf "$WINEPREFIX"
			ci_log "creating Wine prefix $WINEPREFIX ($wine_version; log: $log)"
			ci_quiet "$log" timeout -k 10 300 wineboot -i </dev/null || return 1
		fi
		# Report Windows 10 (Wine 8 defaults to Windows 7; Go 1.21+ needs 10).
		ci_quiet "$WINE_HOME/reg.log" timeout -k 10 120 wine reg add 'HKCU\Software\Wine' \
			/v Version /t REG_SZ /d win10 /f </dev/null || return 1
		# Let wineserver flush the registry and exit before we call the prefix ready.
		timeout 60 wineserver -w || true
		[ -d "$sys32" ] || { echo "no $sys32 after wineboot" >&2; return 1; }
		echo "$prefix_id" >"$stamp"
		ci_log "Wine prefix ready in $((SECONDS - t0))s"
	}
	(
		flock 9
		if [ "$(cat "$stamp" 2>/dev/null)" != "$prefix_id" ]; then
			init_prefix || { ci_log "retrying with a fresh prefix"; rm -rf "$WINEPREFIX"; init_prefix; } || exit 1
		fi
		if ! cmp -s "$shim_dll" "$sys32/bcryptprimitives.dll"; then
			cp -f "$shim_dll" "$sys32/bcryptprimitives.dll"
		fi
	) 9>"$WINE_HOME/prefix.lock" || { ci_log "Wine prefix setup failed"; return 1; }
}
