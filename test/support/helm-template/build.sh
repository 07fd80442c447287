#!/usr/bin/env bash
# Builds helm-template from Debian's packages only (Go 1.19 and the Go libraries it needs).
# Usage: build.sh [OUT_BINARY]   (default: ~/.cache/tollgate-tools/helm-template)
# Copied from the project's shared tools (shared/tools/helm-template) so that CI, which has only
# this repository, can build it; the only change is apt-get waiting for the dpkg lock.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$HOME/.cache/tollgate-tools/helm-template}
pkgs="golang-1.19-go golang-github-masterminds-sprig-dev golang-k8s-sigs-yaml-dev golang-github-xeipuuv-gojsonschema-dev"
missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing </dev/null >/dev/null; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/helm-template" "$(dirname "$out")"
cp "$here/main.go" "$work/src/helm-template/"
cp -rs /usr/share/gocode/src/. "$work/src/"
# GOPATH mode has no module paths: give the /v3 modules their import paths.
for m in github.com/Masterminds/sprig github.com/Masterminds/semver; do
  mkdir -p "$work/src/$m/v3"; cp -rs /usr/share/gocode/src/$m/. "$work/src/$m/v3/"
done
cd "$work/src/helm-template"
env PATH=/usr/lib/go-1.19/bin:$PATH GOPATH="$work" GO111MODULE=off GOFLAGS= CGO_ENABLED=0 HOME="$work" go build -o "$out" .
echo "$out"
