#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, only those that are missing, then builds the
# kube-apiserver the end-to-end tests run (once per machine, cached under ~/.cache/tollgate; see
# test/e2e/support/build-kube-apiserver.sh). Idempotent and fast once done: `npm test` runs it
# first (as `pretest`), so a fresh machine needs nothing done by hand.
set -euo pipefail

# command on PATH -> Debian package that provides it
declare -A NEEDED=(
  [redis-server]=redis-server
  [etcd]=etcd-server
  [openssl]=openssl
  # Debian's kubectl is 1.20, the version of the e2e API server; a newer kubectl on PATH is kept.
  [kubectl]=kubernetes-client
  # The Playground's browser tests drive Debian's chromium with playwright-core.
  [chromium]=chromium
  # The dashboard's queries and the alerts are run on a real Prometheus (prometheus, promtool).
  [prometheus]=prometheus
)

missing=()
for command in "${!NEEDED[@]}"; do
  command -v "$command" >/dev/null 2>&1 || missing+=("${NEEDED[$command]}")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "The tests need these Debian packages: ${missing[*]}" >&2
    echo "Install them with: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "Installing Debian packages the tests need: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" </dev/null
fi

# The chart tests render with `helm template` when helm is on PATH; helm is not packaged for
# Debian, so otherwise they use helm-template (Go's text/template + sprig, built from Debian's
# packages into ~/.cache/tollgate-tools, about 5 s once).
if ! command -v helm >/dev/null 2>&1 && [ ! -x "$HOME/.cache/tollgate-tools/helm-template" ]; then
  bash "$(dirname "${BASH_SOURCE[0]}")/helm-template/build.sh" >/dev/null
fi

# kube-apiserver for test/e2e: does nothing when the cached binary is there (it prints its path).
bash "$(dirname "${BASH_SOURCE[0]}")/../e2e/support/build-kube-apiserver.sh" >/dev/null
