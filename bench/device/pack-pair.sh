#!/usr/bin/env bash
# Packs this checkout and a base commit for one device call that measures the two side by side
# (docs/gpu.md, "Running the benchmarks on a device machine"). Run from the repository after
# `npm install`; BASE is the build to compare with (a commit, a tag, a branch):
#   bash bench/device/pack-pair.sh 984c7db
# It runs the workplace's ../shared/gpu/pack.sh (or $GPU_PACK), which writes .device/ (Node, this
# build, the Vulkan loader, stencil_ref.py, on-gpu.sh), then adds BASE's dist/ as .device/base.tar.xz
# (built in a temporary worktree on this checkout's node_modules) and evolve-pair.sh. Then:
#   run(command: "bash .device/on-gpu.sh bash /abs/.device/evolve-pair.sh $OUT", carry: [".device"])
# where /abs is the device's copy of this checkout (`$PWD` in the command: "bash .device/on-gpu.sh
# bash $PWD/.device/evolve-pair.sh $OUT").
set -euo pipefail
base=${1:?usage: pack-pair.sh BASE (the commit to measure beside this checkout)}
root=$(git rev-parse --show-toplevel)
cd "$root"
pack=${GPU_PACK:-$root/../shared/gpu/pack.sh}
[ -f "$pack" ] || { echo "pack-pair: no $pack (set GPU_PACK to the workplace's shared/gpu/pack.sh)" >&2; exit 1; }
commit=$(git rev-parse --verify "$base^{commit}") || { echo "pack-pair: $base is not a commit here" >&2; exit 1; }
npm run build >/dev/null
bash "$pack"
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT
git worktree add --detach --force "$tree" "$commit" >/dev/null
ln -s "$root/node_modules" "$tree/node_modules"
(cd "$tree" && node scripts/gen.mjs >/dev/null && npx tsc -p tsconfig.build.json)
tar -C "$tree" -cf - --exclude='*.map' dist | xz -6 -T0 > .device/base.tar.xz
git describe --always --dirty > .device/head.txt
git rev-parse --short "$commit" > .device/base.txt
cp bench/device/evolve-pair.sh .device/
du -sh .device
