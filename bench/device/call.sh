#!/usr/bin/env bash
# One device call's worth (pack-pair.sh packs it): on the device machine, from the unpacked project
# (on-gpu.sh runs it in /tmp/proj),
#   bash .device/on-gpu.sh bash $PWD/.device/call.sh $OUT $PWD
# runs, each within the call's remaining seconds (BUDGET, 500 from the start):
#   1. evolve-pair.sh: this build beside the base one, population 1,000 and the defaults, GPU and CPU;
#   2. the field step at N = 2048 and 4096 on the GPU backend, and stencil_ref.py's CUDA kernel;
#   3. the GPU-touching test files (those that need no nats-server, Icecast or browser) with vitest,
#      run in the checkout CHECKOUT on the packed node_modules and generated files.
# PARTS ("evolve field tests"; "open" adds adapter-time.mjs, run first) names the parts to run; evolve-pair.sh's ROUNDS, POP, GENS, PROFILE pass through.
# OUT gets summary.txt (what to read), tests.txt and results.tar.xz (every log and JSON): the device
# brings back 8 files at most.
set -uo pipefail
out=${1:?usage: call.sh OUT CHECKOUT} checkout=${2:?usage: call.sh OUT CHECKOUT}
here=$(cd "$(dirname "$0")" && pwd)
start=$SECONDS budget=${BUDGET:-500}
left() { echo $((budget - (SECONDS - start))); }
res=/tmp/results && rm -rf "$res" && mkdir -p "$res"
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

parts=${PARTS:-evolve field tests}
has() { [[ " $parts " == *" $1 "* ]]; }
# the seconds kept for the parts after each: the field's run and the tests'
after_field=10 && has tests && after_field=150
after_evolve=$after_field && has field && after_evolve=$((after_field + 50))

has open && {
  say "== 0. opening WebGPU in a fresh process, Dawn's default backends against backend=vulkan ($(left) s left)"
  for r in 1 2 3; do
    for flags in "" backend=vulkan; do node "$here/adapter-time.mjs" $flags 2>&1 | grep '^{' | tee -a "$summary"; done
  done
}

has evolve && {
  say "== 1. evolve, $(cat "$here/head.txt") beside $(cat "$here/base.txt") ($(left) s left)"
  timeout "$(($(left) - after_evolve))" bash "$here/evolve-pair.sh" "$res/pair"
  cat "$res/pair/summary.txt" >>"$summary"
}

has field && {
  say "== 2. field step on the GPU backend, then the plain CUDA kernel ($(left) s left)"
  timeout "$(($(left) - after_field))" node bin/crystal.js --backend gpu bench field --sizes 2048,4096 --out "$res/field" \
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
    NO_COLOR=1 timeout "$(($(left) - 15))" node node_modules/vitest/vitest.mjs run $files --coverage.enabled=false \
      --reporter=default --reporter=json --outputFile="$res/tests.json" >"$res/tests.log" 2>&1
    echo "vitest rc $?" >>"$res/tests.log"
  )
  grep -E 'Test Files|Tests |FAIL|vitest rc' "$res/tests.log" | tail -40 | tee -a "$summary"
  grep -E '✓|✗|×|FAIL' "$res/tests.log" >"$out/tests.txt"
}
tar -C "$res" -cJf "$out/results.tar.xz" .
say "== done in $((SECONDS - start)) s"
