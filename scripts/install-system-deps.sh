#!/usr/bin/env bash
# Installs the Debian packages the product and its test suite use; safe to run again (it skips what
# is already there). Needs root or sudo.
#   chromium    its SwiftShader Vulkan driver runs WebGPU without a GPU (and, later, the UI tests)
#   libvulkan1  the Vulkan loader Dawn (the `webgpu` package) opens
#   nats-server the swarm's bus (JetStream), for `crystal archive` and its tests
#   g++ make python3  build better-sqlite3 (the market store on Node 20) from source where no prebuilt binary downloads
#   icecast2    the streaming server the station sends to as a source (SVC_ICECAST_URL), and its tests
#   espeak-ng   the station's voice DJ
set -euo pipefail
packages=(chromium libvulkan1 nats-server g++ make python3 icecast2 espeak-ng)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: all present (${packages[*]})"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "system packages: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "system packages: installed ${missing[*]}"
