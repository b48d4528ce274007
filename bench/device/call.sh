#!/usr/bin/env bash
# One device call's worth (pack-pair.sh packs it): on the device machine, from the unpacked project
# (on-gpu.sh runs it in /tmp/proj),
#   bash .device/on-gpu.sh bash $PWD/.device/call.sh $OUT $PWD
# runs, each within the call's remaining seconds (BUDGET, 500 from the start):
#   1. evolve-pair.sh: this build beside the base one, population 1,000 and the defaults, GPU and CPU;
#   2. the field step at N = 2048 and 4096 on the GPU backend, and stencil_ref.py's CUDA kernel;
#   3. the GPU-touching test files (those that need no nats-server, Icecast or browser) with vitest,
#      run in the checkout CHECKOUT on the packed node_modules and generated files.
# PARTS ("evolve field tests"; "open" adds adapter-time.mjs and dawn-calls.mjs, run first) names the parts to run; evolve-pair.sh's ROUNDS, POP, GENS, PROFILE pass through.
# OUT gets summary.txt (what to read), tests.txt and results.tar.xz (every log and JSON): the device
# brings back 8 files at most.
set -uo pipefail
out=${1:?usage: call.sh OUT CHECKOUT} checkout=${2:?usage: call.sh OUT CHECKOUT}
here=$(cd "$(dirname "$0")" && pwd)
start=$SECONDS budget=${BUDGET:-500}
left() { echo $((budget - (SECONDS - start))); }
# seconds for a part that leaves $1 for the parts after it: at least 5 (GNU timeout reads 0 as no limit, and a
# negative as an option)
within() { local s=$(($(left) - $1)); echo $((s < 5 ? 5 : s)); }
res=/tmp/results && rm -rf "$res" && mkdir -p "$res"
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

parts=${PARTS:-evolve field tests}
has() { [[ " $parts " == *" $1 "* ]]; }
# the seconds kept for what follows each part: the tests (150), the CUDA kernel (60) after the field
# step's bench (50), and 10 to pack the results
tests_s=0 && has tests && tests_s=150
after_field=$((60 + tests_s + 10))
after_evolve=$((tests_s + 10)) && has field && after_evolve=$((50 + after_field))

has open && {
  say "== 0. opening WebGPU in a fresh process, Dawn's default backends against backend=vulkan ($(left) s left)"
  for r in 1 2 3; do
    for flags in "" backend=vulkan; do timeout 30 node "$here/adapter-time.mjs" $flags 2>&1 | grep '^{' | tee -a "$summary"; done
  done
  say "== 0b. what Dawn's calls cost the calling thread, us a call ($(left) s left)"
  timeout 60 node "$here/dawn-calls.mjs" 2>&1 | grep '^{' | tee -a "$summary"
  # whether the driver keeps compiled kernels on disk between processes: NVIDIA's shader cache lives in
  # $__GL_SHADER_DISK_CACHE_PATH, else $XDG_CACHE_HOME/nvidia, else ~/.cache/nvidia, and is off where that
  # cannot be written. Two fresh processes compile the same first generation; a cache that works makes the
  # second's compiles some 0.4 s shorter (a fresh device in the same process took 92 ms where the first took 523)
  say "== 0c. the driver's shader cache: HOME=${HOME:-} XDG_CACHE_HOME=${XDG_CACHE_HOME:-} cache=${__GL_SHADER_DISK_CACHE:-} path=${__GL_SHADER_DISK_CACHE_PATH:-} ($(left) s left)"
  cache=${__GL_SHADER_DISK_CACHE_PATH:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/nvidia}
  say "before: $(du -sk "$cache" 2>&1 | tail -1)"
  for r in 1 2; do
    timeout 60 node bin/crystal.js bench open --out "$res/open-$r" 2>&1 | grep -E 'compiles of the first generation|first generation \(' | tee -a "$summary"
  done
  say "after: $(du -sk "$cache" 2>&1 | tail -1)"
}

has evolve && {
  say "== 1. evolve, $(cat "$here/head.txt") beside $(cat "$here/base.txt") ($(left) s left)"
  timeout "$(within "$after_evolve")" bash "$here/evolve-pair.sh" "$res/pair"
  cat "$res/pair/summary.txt" >>"$summary"
}

has field && {
  say "== 2. field step on the GPU backend, then the plain CUDA kernel ($(left) s left)"
  timeout "$(within "$after_field")" node bin/crystal.js --backend gpu bench field --sizes 2048,4096 --out "$res/field" \
    >"$res/field.log" 2>&1
  grep -E '│|adapter' "$res/field.log" | tee -a "$summary"
  timeout 60 python3 stencil_ref.py "$res/cuda_ref.json" 2>&1 | tee -a "$summary"
}

has tests && {
  say "== 3. the GPU test files with vitest ($(left) s left)"
  (
    cd "$checkout" || exit 1
    ln -sfn /tmp/proj/node_modules node_modules
    rm -rf dist && cp -r /tmp/proj/dist dist
    for f in $(cd /tmp/proj && find engine -name '*.gen.ts'); do cp "/tmp/proj/$f" "$f"; done
    # every test file of engine/ and cli/ but those that start a nats-server, Icecast or a browser (pack-pair.sh)
    files=$(cat "$here/test-files.txt")
    NO_COLOR=1 timeout "$(within 15)" node node_modules/vitest/vitest.mjs run $files --coverage.enabled=false \
      --reporter=default --reporter=json --outputFile="$res/tests.json" >"$res/tests.log" 2>&1
    echo "vitest rc $?" >>"$res/tests.log"
  )
  grep -E 'Test Files|Tests |FAIL|vitest rc' "$res/tests.log" | tail -40 | tee -a "$summary"
  grep -E '✓|✗|×|FAIL' "$res/tests.log" >"$out/tests.txt"
}
tar -C "$res" -cJf "$out/results.tar.xz" .
say "== done in $((SECONDS - start)) s"
