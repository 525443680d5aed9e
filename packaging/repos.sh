#!/bin/sh
# Builds the signed apt and rpm repositories of a release from its
# packages (docs/RELEASING.md, "Package repositories"):
#
#   sh packaging/repos.sh DIST OUT KEY
#
# DIST is GoReleaser's dist directory (the .deb and .rpm files), OUT a new
# directory, KEY the OpenPGP key that signs (a key ID or fingerprint in
# the gpg keyring, $GNUPGHOME when set). It writes
#
#   OUT/hostlink-archive-keyring.asc   the public key, for users to install
#   OUT/apt/   pool/main/h/hostlink/*.deb, dists/stable/{Release,Release.gpg,InRelease}
#              and dists/stable/main/binary-{amd64,arm64}/Packages{,.gz}
#   OUT/apt/hostlink.sources           the deb822 source users install in /etc/apt/sources.list.d
#   OUT/rpm/   the .rpm files, signed (rpmsign), repodata/ (createrepo_c) with
#              repomd.xml.asc, and hostlink.repo for /etc/yum.repos.d
#
# BASE_URL (default https://hostlink.github.io/packages) is where OUT is
# published; the .sources and .repo files point there. Tools: gpg,
# apt-ftparchive (apt-utils), createrepo_c, rpmsign (rpm).
set -eu
dist="${1:?usage: repos.sh DIST OUT KEY}"
out="${2:?usage: repos.sh DIST OUT KEY}"
key="${3:?usage: repos.sh DIST OUT KEY}"
base_url="${BASE_URL:-https://hostlink.github.io/packages}"
base_url="${base_url%/}"
[ -e "$out" ] && { echo "repos.sh: $out exists" >&2; exit 1; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
gpg --batch --armor --export "$key" >"$out/hostlink-archive-keyring.asc"
[ -s "$out/hostlink-archive-keyring.asc" ] || { echo "repos.sh: no key $key in the keyring" >&2; exit 1; }

# ---------------------------------------------------------------- apt
pool="$out/apt/pool/main/h/hostlink"
mkdir -p "$pool"
cp "$dist"/hostlink_*.deb "$pool/"
cd "$out/apt"
for arch in amd64 arm64; do
	d="dists/stable/main/binary-$arch"
	mkdir -p "$d"
	apt-ftparchive --arch "$arch" packages pool >"$d/Packages"
	grep -q "^Architecture: $arch\$" "$d/Packages" || { echo "repos.sh: no .deb for $arch" >&2; exit 1; }
	gzip -9n <"$d/Packages" >"$d/Packages.gz"
done
apt-ftparchive \
	-o APT::FTPArchive::Release::Origin=hostlink \
	-o APT::FTPArchive::Release::Label=hostlink \
	-o APT::FTPArchive::Release::Suite=stable \
	-o APT::FTPArchive::Release::Codename=stable \
	-o APT::FTPArchive::Release::Architectures="amd64 arm64" \
	-o APT::FTPArchive::Release::Components=main \
	-o APT::FTPArchive::Release::Description="hostlink, a local PC executor for AI agents" \
	release dists/stable >dists/stable/Release.tmp
mv dists/stable/Release.tmp dists/stable/Release
gpg --batch --yes --local-user "$key" --digest-algo SHA512 --clearsign -o dists/stable/InRelease dists/stable/Release
gpg --batch --yes --local-user "$key" --digest-algo SHA512 --armor --detach-sign -o dists/stable/Release.gpg dists/stable/Release
cat >hostlink.sources <<SOURCES
Types: deb
URIs: $base_url/apt
Suites: stable
Components: main
Signed-By: /usr/share/keyrings/hostlink-archive-keyring.asc
SOURCES

# ---------------------------------------------------------------- rpm
mkdir -p "$out/rpm"
cp "$dist"/hostlink-*.rpm "$out/rpm/"
cd "$out/rpm"
for p in ./*.rpm; do
	rpmsign --define "__gpg $(command -v gpg)" --define "_gpg_name $key" --define "_gpg_sign_cmd_extra_args --batch --digest-algo SHA512" --addsign "$p" >/dev/null
done
createrepo_c --quiet --simple-md-filenames --no-database --revision "$(rpm -qp --qf "%{VERSION}" ./*.x86_64.rpm 2>/dev/null)" .
gpg --batch --yes --local-user "$key" --digest-algo SHA512 --armor --detach-sign -o repodata/repomd.xml.asc repodata/repomd.xml
cat >hostlink.repo <<REPO
[hostlink]
name=hostlink
baseurl=$base_url/rpm
enabled=1
gpgcheck=1
repo_gpgcheck=1
gpgkey=$base_url/hostlink-archive-keyring.asc
REPO
