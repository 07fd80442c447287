#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, only those that are missing. Idempotent:
# `npm test` runs it first (as `pretest`), so a fresh machine needs nothing done by hand.
set -euo pipefail

# command on PATH -> Debian package that provides it
declare -A NEEDED=(
  [redis-server]=redis-server
)

missing=()
for command in "${!NEEDED[@]}"; do
  command -v "$command" >/dev/null 2>&1 || missing+=("${NEEDED[$command]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "The tests need these Debian packages: ${missing[*]}" >&2
  echo "Install them with: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "Installing Debian packages the tests need: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
