#!/usr/bin/env bash
# hostlink CI: `bash .ci/run` (from anywhere; it cds to the repo root).
#
# Steps (all run; the script exits non-zero if any failed):
#   deps      apt: wine wine64 gcc-mingw-w64-x86-64, gcc (for -race), zsh (quoting tests), ripgrep fd-find (bench limits),
#             xvfb openbox xterm xdotool x11-apps x11-utils x11-xserver-utils netpbm xclip dbus-daemon at-spi2-core
#             python3-gi gir1.2-gtk-3.0 (desktop tests), mutter pipewire pipewire-bin wireplumber xdg-desktop-portal
#             xdg-desktop-portal-gnome gstreamer1.0-{pipewire,tools,plugins-base,plugins-good} weston gnome-shell (Wayland desktop
#             tests), chromium (web console), gnome-keyring (credential store against a real
#             Secret Service), systemd (systemd-analyze verify of the autostart unit), fish (completion tests),
#             only when missing
#   npm       .ci/node (npm ci, skipped when node_modules matches the lock file);
#             .ci/agents-node: the pinned Codex, Claude Code and Qoder CLIs (npm install
#             --ignore-scripts from the lock, same stamp), exports HOSTLINK_AGENT_CLIS;
#             exports HOSTLINK_NODE_MODULES
#   gofmt     gofmt -l . must print nothing
#   tidy      go mod tidy -diff must print nothing (go.mod and go.sum match the imports)
#   build+vet go build ./... and go vet ./... for {linux,darwin,windows} x {amd64,arm64}, CGO_ENABLED=0
#   staticcheck  honnef.co/go/tools v0.8.2 (installed once into the CI cache) for linux, darwin
#             and windows: no findings
#   wine      .ci/wine-test: Windows test binaries of packages with *_windows.go under Wine
#   fuzz      the jail's path resolver, the ipc frame decoder, the browse request and
#             session-root payload decoders and the root-grant verifier, the link's
#             envelope and payload decoders, 200,000 execs each; the jail against
#             the kernel (openat2 oracle), 20,000 execs
#   release   .ci/release-check: a snapshot release (GoReleaser, cached in ~/.cache/hostlink-ci/tools) built
#             twice and checked by go test ./internal/release (archives, packages, signature, install.sh)
#   test      go test -race -count=1 -timeout 20m over every package but internal/release, which the
#             release step runs (CGO_ENABLED=1, for the race detector)
# HOSTLINK_REQUIRE_INTEGRATION=1 is exported for all tests.
set -uo pipefail

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$CI_ROOT" || exit 1
export PATH="/usr/local/go/bin:$PATH"
export HOSTLINK_REQUIRE_INTEGRATION=1

summary=()
failures=()
failed=0
T_START=$SECONDS
STEP_LOGS="$(mktemp -d)"
trap 'rm -rf "$STEP_LOGS"' EXIT
# step NAME CMD...: run CMD, record the outcome and how long it took. A
# failed step's failing tests and panics are repeated after the summary,
# since a long log is often seen only by its tail.
step() {
	local name="$1" t0=$SECONDS rc log
	shift
	log="$STEP_LOGS/${#summary[@]}.log"
	echo
	echo "######## $name"
	# Not a pipe: CMD runs in this shell, so the exports of install steps stay.
	"$@" > >(tee "$log") 2>&1
	rc=$?
	wait "$!" 2>/dev/null
	if [ "$rc" -eq 0 ]; then
		summary+=("$(printf '[ok]     %-28s %4ss' "$name" $((SECONDS - t0)))")
	else
		summary+=("$(printf '[FAILED] %-28s %4ss  (exit %s)' "$name" $((SECONDS - t0)) "$rc")")
		failures+=("== $name" "$(grep -E -A8 -- '^(--- FAIL|FAIL|panic:|ERROR|WARNING: DATA RACE)' "$log" | head -n 150)")
		failed=$((failed + 1))
	fi
	return 0
}

install_apt() {
	ci_apt_ensure "${CI_WINE_PKGS[@]}" gcc libc6-dev zsh ripgrep fd-find || return 1
	# Desktop tests: a private X server, a window manager, a terminal to
	# drive, and independent tools to check the effects (xdotool, xwd,
	# xprop/xwininfo, xrandr, netpbm, xclip for the clipboard); a session
	# bus, AT-SPI and a GTK application for accessibility.
	ci_apt_ensure xvfb openbox xterm xdotool x11-apps x11-utils x11-xserver-utils netpbm xclip \
		dbus-daemon at-spi2-core python3-gi gir1.2-gtk-3.0 || return 1
	# Wayland desktop tests: a headless GNOME session (mutter rendering
	# with llvmpipe) with PipeWire and the desktop portals, GStreamer's
	# pipewiresrc and pw-dump for frames, weston-terminal as a window to
	# drive (internal/desktop/waylandtest starts them per test).
	ci_apt_ensure mutter dbus libgl1-mesa-dri libegl-mesa0 pipewire pipewire-bin wireplumber \
		gstreamer1.0-pipewire gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good \
		xdg-desktop-portal xdg-desktop-portal-gnome weston fonts-dejavu-core || return 1
	# gnome-shell: GNOME's Screenshot portal needs it (the screenshot-only
	# route's test).
	ci_apt_ensure gnome-shell || return 1
	# Credential store and autostart tests: gnome-keyring on a private session
	# bus; systemd-analyze to verify the generated user unit.
	ci_apt_ensure gnome-keyring systemd || return 1
	# Shell completion tests drive bash and fish (zsh is above).
	ci_apt_ensure fish || return 1
	# The companion test with the runtime in its own network namespace.
	ci_apt_ensure iproute2 || return 1
	# The web console's browser test: Debian's Chromium, driven over CDP.
	ci_apt_ensure chromium || return 1
	# Approval notifications: a real notification server (dunst) whose
	# Approve and Deny actions the test invokes on a private session bus.
	ci_apt_ensure dunst || return 1
	if ! command -v npm >/dev/null; then
		ci_apt_ensure nodejs npm || return 1
	fi
	go version && wine --version 2>/dev/null && node --version
}

install_npm() {
	local dir="$CI_ROOT/.ci/node" stampf want
	stampf="$dir/node_modules/.hostlink-lock.sha256"
	want="$( { cat "$dir/package.json" "$dir/package-lock.json"; node --version; } | sha256sum | cut -c1-64)"
	if [ "$(cat "$stampf" 2>/dev/null)" = "$want" ]; then
		echo "npm: node_modules up to date"
	else
		echo "npm: npm ci in .ci/node (log: $CI_CACHE/npm.log)"
		ci_quiet "$CI_CACHE/npm.log" npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error || return 1
		echo "$want" >"$stampf"
	fi
	export HOSTLINK_NODE_MODULES="$dir/node_modules"
	echo "HOSTLINK_NODE_MODULES=$HOSTLINK_NODE_MODULES"
	node -e 'console.log("@modelcontextprotocol/sdk " + require(process.argv[1] + "/@modelcontextprotocol/sdk/package.json").version)' \
		"$HOSTLINK_NODE_MODULES"
}

# The agent CLIs the runtime adapters are tested against, pinned in
# .ci/agents-node. Install scripts are skipped: the adapters run the
# platform binaries inside the packages, and qodercli's postinstall would
# write under ~/.qoder.
install_agent_clis() {
	local dir="$CI_ROOT/.ci/agents-node" stampf want
	stampf="$dir/node_modules/.hostlink-lock.sha256"
	want="$( { cat "$dir/package.json" "$dir/package-lock.json"; node --version; } | sha256sum | cut -c1-64)"
	if [ "$(cat "$stampf" 2>/dev/null)" = "$want" ]; then
		echo "agent CLIs: node_modules up to date"
	else
		# npm install with the lock file, not npm ci: npm leaves optional
		# platform packages of qodercli's dependencies that the registry
		# lacks out of the lock, and npm ci then refuses the lock.
		echo "agent CLIs: npm install in .ci/agents-node (log: $CI_CACHE/npm-agents.log)"
		ci_quiet "$CI_CACHE/npm-agents.log" npm install --prefix "$dir" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error || return 1
		echo "$want" >"$stampf"
	fi
	export HOSTLINK_AGENT_CLIS="$dir/node_modules"
	echo "HOSTLINK_AGENT_CLIS=$HOSTLINK_AGENT_CLIS"
	node -e 'for (const p of ["@openai/codex", "@anthropic-ai/claude-code", "@qoder-ai/qodercli"]) console.log(p + " " + require(process.argv[1] + "/" + p + "/package.json").version)' \
		"$HOSTLINK_AGENT_CLIS"
}

check_gofmt() {
	local out
	# gofmt -l ., minus .git and the npm cache (packages there may ship .go files).
	out="$(find . \( -path ./.git -o -path ./.ci/node/node_modules -o -path ./.ci/agents-node/node_modules \) -prune -o \
		-type f -name '*.go' -print0 | xargs -0 -r gofmt -l 2>&1)"
	if [ -n "$out" ]; then
		echo "gofmt: these files need formatting (run gofmt -w):"
		printf '  %s\n' $out
		return 1
	fi
	echo "gofmt: clean"
}

# STATICCHECK_VERSION is pinned; the binary is built once into the CI cache.
STATICCHECK_VERSION=v0.8.2

install_staticcheck() {
	local bin="$CI_CACHE/bin/staticcheck"
	if [ -x "$bin" ] && "$bin" -version 2>/dev/null | grep -q "${STATICCHECK_VERSION#v}"; then
		echo "staticcheck $STATICCHECK_VERSION: cached"
		return 0
	fi
	echo "staticcheck: go install honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION (log: $CI_CACHE/staticcheck.log)"
	(cd "$CI_CACHE" && GOBIN="$CI_CACHE/bin" GOFLAGS=-mod=mod ci_quiet "$CI_CACHE/staticcheck.log" \
		go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION")
}

check_tidy() {
	local out
	if ! out="$(go mod tidy -diff 2>&1)"; then
		echo "go mod tidy -diff: go.mod or go.sum are not tidy (run go mod tidy):"
		echo "$out"
		return 1
	fi
	echo "go mod tidy: clean"
}

run_staticcheck() {
	local os bad=0
	for os in linux darwin windows; do
		echo "-- staticcheck GOOS=$os"
		GOOS=$os CGO_ENABLED=0 "$CI_CACHE/bin/staticcheck" ./... || bad=1
	done
	return $bad
}

build_vet() {
	local os arch bad=0
	for os in linux darwin windows; do
		for arch in amd64 arm64; do
			echo "-- $os/$arch: go build ./... && go vet ./..."
			GOOS=$os GOARCH=$arch CGO_ENABLED=0 go build ./... || { bad=1; echo "   build FAILED for $os/$arch"; continue; }
			GOOS=$os GOARCH=$arch CGO_ENABLED=0 go vet ./... || { bad=1; echo "   vet FAILED for $os/$arch"; }
		done
	done
	return $bad
}

install_apt && install_npm && install_agent_clis && install_staticcheck && echo INSTALL_OK
