#!/usr/bin/env bash
# Builds kube-apiserver 1.20.2 from Debian's `kubernetes` source package, for the end-to-end
# tests (see test/e2e/support/control-plane.ts). Debian ships only kubectl from that source;
# the API server builds from it too, with one fix: the vendored reflect2 1.0.1 crashes under
# Go 1.18+ (SIGSEGV in map iteration on the first custom-resource create), so it is replaced
# by Debian's reflect2 1.0.2.
#
# Idempotent: the binary is cached at ${XDG_CACHE_HOME:-$HOME/.cache}/tollgate/kube-apiserver-1.20.2
# and nothing is done when it exists and answers --version. A cold build takes about 2.5 minutes
# on 2 cores and needs about 2 GB of disk under ${TMPDIR:-/tmp} while it runs.
#
# Needs root for apt-get (enabling deb-src and installing golang-1.19-go, rsync, etcd-server and
# golang-github-modern-go-reflect2-dev) unless those are already there. Reads no standard input.
# Prints the path of the binary as its last line of output.
set -euo pipefail

VERSION=1.20.2
CACHE_DIR="${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tollgate"
BINARY="$CACHE_DIR/kube-apiserver-$VERSION"
GO_BIN=/usr/lib/go-1.19/bin
REFLECT2=/usr/share/gocode/src/github.com/modern-go/reflect2
PACKAGES=(golang-1.19-go rsync etcd-server golang-github-modern-go-reflect2-dev)

log() { echo "[build-kube-apiserver] $*" >&2; }

binary_works() { [ -x "$BINARY" ] && "$BINARY" --version >/dev/null 2>&1; }

if binary_works; then
  echo "$BINARY"
  exit 0
fi

mkdir -p "$CACHE_DIR"
# One build at a time per cache (two test runs started together wait for each other).
exec 9>"$CACHE_DIR/.kube-apiserver-$VERSION.lock"
if ! flock -n 9; then
  log "another build holds $CACHE_DIR/.kube-apiserver-$VERSION.lock; waiting for it"
  flock 9
fi
if binary_works; then
  log "built by the other process"
  echo "$BINARY"
  exit 0
fi

started=$SECONDS
log "kube-apiserver $VERSION is not in $CACHE_DIR: building it from Debian's kubernetes source package (about 2.5 minutes)"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    log "needs root for: $*"
    log "run this script once as root (or with passwordless sudo): bash test/e2e/support/build-kube-apiserver.sh"
    exit 1
  fi
}
export DEBIAN_FRONTEND=noninteractive
# Wait for apt/dpkg locks held by another install (a parallel test run) rather than failing.
APT=(apt-get -o DPkg::Lock::Timeout=600)

# 1. Source packages: a deb-src copy of the main Debian sources, unless deb-src is already enabled.
updated=no
if ! grep -Eqs '^(Types:.*\bdeb-src\b|deb-src[[:space:]])' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; then
  log "enabling Debian source packages (/etc/apt/sources.list.d/tollgate-deb-src.sources)"
  sed -E 's/^Types:.*$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"${TMPDIR:-/tmp}/tollgate-deb-src.sources"
  as_root install -m 0644 "${TMPDIR:-/tmp}/tollgate-deb-src.sources" /etc/apt/sources.list.d/tollgate-deb-src.sources
  rm -f "${TMPDIR:-/tmp}/tollgate-deb-src.sources"
  log "apt-get update"
  as_root "${APT[@]}" update -qq
  updated=yes
fi

# 2. Build tools (and etcd, which the tests run next to the API server).
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$updated" = no ]; then
    log "apt-get update"
    as_root "${APT[@]}" update -qq
    updated=yes
  fi
  log "installing ${missing[*]}"
  as_root "${APT[@]}" install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi

# 3. The source, in a temporary directory removed at the end (it is about 1.5 GB once built).
work=$(mktemp -d "${TMPDIR:-/tmp}/tollgate-kubernetes-build.XXXXXX")
cleanup() {
  if [ -n "${TOLLGATE_KEEP_BUILD_DIR:-}" ]; then
    log "kept the build directory $work (TOLLGATE_KEEP_BUILD_DIR is set)"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
cd "$work"
log "downloading the kubernetes source package into $work"
download() { apt-get source --download-only -qq kubernetes </dev/null >/dev/null; }
# apt downloads as the unprivileged user _apt when it can write here; otherwise it warns and
# downloads as root, which is fine.
if ! download 2>"$work/apt-source.log"; then
  if [ "$updated" = no ]; then
    # The package lists may be missing or stale (deb-src was enabled elsewhere).
    log "apt-get update"
    as_root "${APT[@]}" update -qq
    updated=yes
  fi
  download 2>"$work/apt-source.log" || { cat "$work/apt-source.log" >&2; exit 1; }
fi
orig=$(ls kubernetes_*.orig.tar.gz)
log "unpacking $orig"
tar -xzf "$orig"
src="$work/kubernetes-$VERSION"
[ -d "$src" ] || { log "expected $src after unpacking $orig (is the source package still Kubernetes $VERSION?)"; ls "$work" >&2; exit 1; }

# 4. The reflect2 fix.
log "replacing vendor/github.com/modern-go/reflect2 with Debian's $(basename "$REFLECT2") 1.0.2"
rm -rf "$src/vendor/github.com/modern-go/reflect2"
cp -r "$REFLECT2" "$src/vendor/github.com/modern-go/reflect2"
rm -f "$src/vendor/github.com/modern-go/reflect2/go.mod"

# 5. GOPATH layout as Debian's rules do it, then the build.
mkdir -p "$src/.go/src/k8s.io" "$work/home"
ln -s ../../.. "$src/.go/src/k8s.io/kubernetes"
log "make WHAT=cmd/kube-apiserver (Go $("$GO_BIN/go" env GOVERSION); the longest step)"
build_started=$SECONDS
(
  cd "$src"
  export PATH="$GO_BIN:$PATH" GOPATH="$src/.go" CGO_ENABLED=0 HOME="$work/home"
  make WHAT=cmd/kube-apiserver </dev/null >"$work/make.log" 2>&1
) || { log "make failed; the end of its output:"; tail -n 60 "$work/make.log" >&2; exit 1; }
log "compiled in $((SECONDS - build_started)) s"

built="$src/_output/bin/kube-apiserver"
"$built" --version >/dev/null
cp "$built" "$BINARY.tmp.$$"
chmod 0755 "$BINARY.tmp.$$"
mv -f "$BINARY.tmp.$$" "$BINARY"
log "$("$BINARY" --version) cached at $BINARY ($(du -h "$BINARY" | cut -f1)), in $((SECONDS - started)) s; removing the build directory"
echo "$BINARY"
