#!/usr/bin/env bash
# Packs this checkout and a base commit for one device call that measures the two side by side
# (docs/gpu.md, "Running the benchmarks on a device machine"). Run from the repository after
# `npm install`; BASE is the build to compare with (a commit, a tag, a branch):
#   bash bench/device/pack-pair.sh 984c7db
# It runs the workplace's ../shared/gpu/pack.sh (or $GPU_PACK), which writes .device/ (Node, this
# build, the Vulkan loader, stencil_ref.py, on-gpu.sh), then adds BASE's dist/ and bin/ as .device/base.tar.xz
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
# its own bin/ beside its dist/: since 2026-11-28 bin runs dist/bundle/ (scripts/bundle.mjs), which older builds lack
(cd "$tree" && node scripts/gen.mjs >/dev/null && npx tsc -p tsconfig.build.json && if [ -f scripts/bundle.mjs ]; then node scripts/bundle.mjs; fi)
tar -C "$tree" -cf - --exclude='*.map' dist bin | xz -6 -T0 > .device/base.tar.xz
# the project again, leaner than pack.sh's (which passes the 64 MiB a call may carry): the runtime
# closure with vitest's and the test files' modules (closure.mjs), the generated sources, no linters,
# compilers, UI tools or other platforms' Dawn
node bench/device/closure.mjs --tests > .device/closure.txt
tar -cf - --exclude='*.map' --exclude='node_modules/webgpu/dist/darwin-*' --exclude='node_modules/webgpu/dist/linux-arm64' \
  --exclude='node_modules/webgpu/dist/win32-*' --exclude='node_modules/better-sqlite3/deps' --exclude='node_modules/better-sqlite3/src' \
  dist bin materials shaders examples package.json $(git ls-files -o -i --exclude-standard | grep '\.gen\.ts$') -T .device/closure.txt |
  xz -6 -T0 > .device/proj.tar.xz
# the test files call.sh runs there: engine/'s and cli/'s, but those that start a nats-server, Icecast or a browser
git ls-files 'engine/*.test.ts' 'cli/*.test.ts' | xargs grep -L -E 'nats-server|startNats|icecast|chromium|playwright' > .device/test-files.txt
# and server/'s and app/'s (call.sh's part servertests), which start the built server: those that need no
# nats-server, Icecast, espeak-ng or browser (none of them is on the device machine)
git ls-files 'server/*.test.ts' 'app/*.test.ts' | xargs grep -L -E 'nats-server|startNats|icecast|chromium|playwright|espeak' \
  > .device/server-test-files.txt
git describe --always --dirty > .device/head.txt
git rev-parse --short "$commit" > .device/base.txt
cp bench/device/evolve-pair.sh bench/device/base.sh bench/device/served.mjs bench/device/publisher.mjs bench/device/call.sh bench/device/adapter-time.mjs bench/device/dawn-calls.mjs bench/device/first-compiles.mjs bench/device/perturb-probe.mjs bench/device/labels-probe.mjs .device/
du -sh .device
