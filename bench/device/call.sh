#!/usr/bin/env bash
# One device call's worth (pack-pair.sh packs it): on the device machine, from the unpacked project
# (on-gpu.sh runs it in /tmp/proj),
#   bash .device/on-gpu.sh bash $PWD/.device/call.sh $OUT $PWD
# runs, each within the call's remaining seconds (BUDGET, 500 from the start):
#   1. evolve-pair.sh: this build beside the base one, population 1,000 and the defaults, GPU and CPU;
#   2. the field step at N = 2048 and 4096 on the GPU backend, and stencil_ref.py's CUDA kernel;
#   3. the GPU-touching test files of engine/ and cli/ (those that need no nats-server, Icecast or
#      browser) with vitest, run in the checkout CHECKOUT on the packed node_modules and generated files;
#   4. (servertests) server/'s and app/'s test files that need none of those nor espeak-ng, the same way;
#   5. (served) served.mjs: a served field's write, steps and dreams at N = 2048, this build beside the base one;
#   6. (publisher) publisher.mjs: the consciousness publisher's periods at N = 2048, this build beside the base one;
#   7. (probe) perturb-probe.mjs: each operation of a perturbation timed on batches of 2,000, 1,000 and 24 fields;
#   8. (labels) labels-probe.mjs: one thread's detection a window, and 2,000 maps' components labelled on the device.
# PARTS ("evolve field tests"; "open" adds adapter-time.mjs, dawn-calls.mjs, the shader cache and
# first-compiles.mjs, run first; "servertests" part 4, "served" part 5, "publisher" part 6, "probe" part 7,
# "labels" part 8) names the parts to run; evolve-pair.sh's ROUNDS, POP, GENS, PROFILE pass through.
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
# the seconds kept for what follows each part: the tests (150, the server's 200), the CUDA kernel (60)
# after the field step's bench (50), and 10 to pack the results
server_s=0 && has servertests && server_s=200
tests_s=$server_s && has tests && tests_s=$((150 + server_s))
after_field=$((60 + tests_s + 10))
after_evolve=$((tests_s + 10)) && has field && after_evolve=$((50 + after_field))

say "== the adapter and its buffer limits, which bound a batch's fields"
timeout 30 node "$here/adapter-time.mjs" 2>&1 | grep '^{' | tee -a "$summary"

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
    timeout 60 node bin/crystal.js bench open --out "$res/open-$r" 2>&1 | grep -E 'compiles of the first generation|on the calling thread|first generation \(' | tee -a "$summary"
  done
  say "after: $(du -sk "$cache" 2>&1 | tail -1)"
  # the first generation's kernels compiled as a fresh process's first, all at once against one after another,
  # with the driver's disk cache off (0c and the recording would fill it: the runs would time its hits)
  say "== 0d. a process's first compiles, at once against one after another, no disk cache ($(left) s left)"
  if [ "$(left)" -lt 300 ]; then
    say "skipped: under 300 s left"
  else
    __GL_SHADER_DISK_CACHE=0 timeout 60 node "$here/first-compiles.mjs" record "$res/kernels.json" >"$res/kernels.log" 2>&1
    grep '^{' "$res/kernels.log" | tee -a "$summary"
    if [ -s "$res/kernels.json" ]; then
      for r in 1 2 3; do
        for mode in together serial; do
          __GL_SHADER_DISK_CACHE=0 timeout 30 node "$here/first-compiles.mjs" $mode "$res/kernels.json" 2>&1 | grep '^{' | tee -a "$summary"
        done
      done
    else
      say "the recording failed: $(tail -3 "$res/kernels.log")"
    fi
  fi
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

# the checkout made runnable once: the packed node_modules, build and generated sources
ready=0
prepare() {
  [ $ready = 1 ] && return
  ln -sfn /tmp/proj/node_modules "$checkout/node_modules"
  # -a keeps the build's times: bin runs dist/bundle/ only when it is no older than dist/cli/ (cp -r made the
  # tree the newer there, so the CLI ran tsc's modules and its test of what the chunks load failed on the H200)
  rm -rf "$checkout/dist" && cp -a /tmp/proj/dist "$checkout/dist"
  for f in $(cd /tmp/proj && find engine -name '*.gen.ts'); do cp "/tmp/proj/$f" "$checkout/$f"; done
  ready=1
}
# run_tests NAME LIST LEAVE: the files LIST names, with vitest in the checkout, leaving LEAVE seconds
run_tests() {
  local name=$1 list=$here/$2 leave=$3
  prepare
  (
    cd "$checkout" || exit 1
    NO_COLOR=1 timeout "$(within "$leave")" node node_modules/vitest/vitest.mjs run $(cat "$list") --coverage.enabled=false \
      --reporter=default --reporter=json --outputFile="$res/$name.json" >"$res/$name.log" 2>&1
    echo "vitest rc $?" >>"$res/$name.log"
  )
  grep -E 'Test Files|Tests |FAIL|vitest rc' "$res/$name.log" | tail -40 | tee -a "$summary"
  grep -E '✓|✗|×|FAIL' "$res/$name.log" >>"$out/tests.txt"
}

has tests && {
  say "== 3. the GPU test files with vitest ($(left) s left)"
  run_tests tests test-files.txt $((server_s + 15))
}

has served && {
  say "== 5. a served field's changes, $(cat "$here/head.txt") beside $(cat "$here/base.txt") ($(left) s left)"
  bash "$here/base.sh" /tmp/base
  timeout "$(within $((server_s + 15)))" node "$here/served.mjs" "$PWD" /tmp/base "$res/served.json" 2>"$res/served.log" | tee -a "$summary"
}

has publisher && {
  say "== 6. the publisher's periods, $(cat "$here/head.txt") beside $(cat "$here/base.txt") ($(left) s left)"
  bash "$here/base.sh" /tmp/base
  timeout "$(within $((server_s + 15)))" node "$here/publisher.mjs" "$PWD" /tmp/base "$res/publisher.json" 2>"$res/publisher.log" | tee -a "$summary"
}

has probe && {
  say "== 7. a perturbation's operations on one batch, each timed to the device's end (perturb-probe.mjs) ($(left) s left)"
  for f in 2000 1000 24; do timeout 100 node "$here/perturb-probe.mjs" $f 96 2>&1 | tail -3 | tee -a "$summary"; done
}

has labels && {
  say "== 8. one thread's detection a window, and 2,000 maps labelled on the device (labels-probe.mjs) ($(left) s left)"
  timeout "$(within $((tests_s + 10)))" node "$here/labels-probe.mjs" 2>&1 | tail -3 | tee -a "$summary"
}

has servertests && {
  say "== 4. the server's and app's test files that need no nats-server, Icecast, espeak-ng or browser ($(left) s left)"
  run_tests servertests server-test-files.txt 15
}
tar -C "$res" -cJf "$out/results.tar.xz" .
say "== done in $((SECONDS - start)) s"
