#!/usr/bin/env bash
# Install the Debian packages the local Slurm test cluster needs
# (scripts/slurm-packages.txt), without letting Debian's maintainer scripts
# start munge/slurm services: a temporary /usr/sbin/policy-rc.d exits 101.
# Any pre-existing policy-rc.d is restored afterwards. Must run as root.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
list="$here/../../scripts/slurm-packages.txt"
mapfile -t pkgs < <(grep -Ev '^\s*(#|$)' "$list")

# Already installed? Nothing to do (keeps CI fast and offline-safe).
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "slurm packages already installed"
    exit 0
fi
echo "installing: ${missing[*]}"

policy=/usr/sbin/policy-rc.d
backup=""
if [ -e "$policy" ]; then
    backup=$(mktemp /tmp/policy-rc.d.XXXXXX)
    cp -p "$policy" "$backup"
fi
restore() {
    if [ -n "$backup" ]; then mv -f "$backup" "$policy"; else rm -f "$policy"; fi
}
trap restore EXIT
printf '#!/bin/sh\nexit 101\n' > "$policy"
chmod 755 "$policy"

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
