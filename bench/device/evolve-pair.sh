#!/usr/bin/env bash
# On the device machine, from the unpacked project (on-gpu.sh runs it in /tmp/proj): evolve with this
# build and the base build (pack-pair.sh), alternately, so both see the same machine. OUT: where the
# logs and summary.txt go (absolute). ROUNDS (2) rounds of: population POP (1000) for GENS (3)
# generations with --debug on the GPU, then the defaults (population 12, 10 generations) on the GPU
# and on the CPU, each build in turn. summary.txt has every generation's seconds, each command's
# time, the bytes it read back from the device and the registries' sizes and QD-scores (the two
# builds agree where the evaluation is the same; against a base before 2026-12-07's resting fields
# they register other structures), after this build's `bench open` table. POP=0 leaves out the population runs;
# VARIANTS adds runs of this build's defaults with other flags or variables (by default one step a dispatch); PROFILE=1 adds a run of this build's defaults on the GPU under node --cpu-prof (main.cpuprofile, its
# main thread); PROFILE=pop profiles a population run instead.
set -uo pipefail
out=${1:?usage: evolve-pair.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
rounds=${ROUNDS:-2} pop=${POP:-1000} gens=${GENS:-3} size=${SIZE:-96}
# the defaults run (DEFAULTS: other flags, to try the script on a software adapter)
read -ra defaults <<<"${DEFAULTS:---generations 10}"
# VARIANTS: flag sets separated by ';', each one more run of this build's defaults on the GPU a round
# (say '--detect-threads 0;--detect-threads 4'); a word NAME=value sets that variable for the run. By
# default one step a GPU dispatch, the control of the several steps a dispatch the defaults take
IFS=';' read -ra variants <<<"${VARIANTS-SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH=1}"
bash "$here/base.sh" /tmp/base
declare -A dirs=([head]=$PWD [base]=/tmp/base)
declare -A names=([head]="$(cat "$here/head.txt" 2>/dev/null || echo head)" [base]="$(cat "$here/base.txt" 2>/dev/null || echo base)")
summary=$out/summary.txt
: >"$summary"
# variables set for a run (a variant's NAME=value words)
run_env=()
evolve() { # build backend tag args...
  local build=$1 backend=$2 tag=$3; shift 3
  local log=$out/$tag.log data
  data=$(mktemp -d)
  local t0=$(date +%s.%N)
  (cd "${dirs[$build]}" && env "${run_env[@]}" SVC_CRYSTAL_DATA_DIR=$data node bin/crystal.js --debug --backend "$backend" evolve \
    --material europium_crystal --seed 1 "$@") >"$log" 2>&1
  local rc=$? t1=$(date +%s.%N)
  local gensec registry back
  gensec=$(grep -o 'evaluated in [0-9.]* s' "$log" | awk '{printf "%s ", $3}')
  # bytes read back from the device, all the run's engines together (--debug's transfer lines)
  back=$(grep -o 'read back [0-9,]* bytes in [0-9,]* reads' "$log" | tr -d , | awk '{b += $3; r += $6} END {if (r) printf "read back %.1f MB in %d reads | ", b / 1e6, r}')
  registry=$(grep -o 'registered [0-9]* new primitives' "$log" | awk '{print $2}'); registry+=" primitives, $(grep -o 'QD-score [0-9.]* over' "$log" | awk '{print $2}') QD"
  printf '%-28s %-4s %-4s rc %s  %6.2f s  %s | %sgenerations: %s\n' "$tag" "$build" "$backend" "$rc" "$(awk "BEGIN { print $t1 - $t0 }")" "$registry" "$back" "$gensec" | tee -a "$summary"
  rm -rf "$data"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$summary"
echo "head ${names[head]}, base ${names[base]}; population $pop at N = $size for $gens generations, then the defaults" | tee -a "$summary"
# what opening the GPU backend costs with this build (the device, each kernel's compile, at once against
# one after another): the first generation's `open` (docs/gpu.md, "crystal bench open")
node bin/crystal.js bench open --out "$out/bench" >"$out/bench-open.log" 2>&1
grep '│' "$out/bench-open.log" | tee -a "$summary"
for r in $(seq 1 "$rounds"); do
  [ "$pop" -gt 0 ] && for build in head base; do
    evolve "$build" gpu "r$r-$build-pop$pop" --population "$pop" --size "$size" --generations "$gens"
  done
  for build in head base; do
    evolve "$build" gpu "r$r-$build-defaults-gpu" "${defaults[@]}"
    evolve "$build" cpu "r$r-$build-defaults-cpu" "${defaults[@]}"
  done
  for v in "${variants[@]}"; do
    read -ra words <<<"$v"
    flags=() run_env=()
    for w in "${words[@]}"; do if [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then run_env+=("$w"); else flags+=("$w"); fi; done
    evolve head gpu "r$r-head-gpu${v//[^A-Za-z0-9._-]/}" "${defaults[@]}" "${flags[@]}"
    run_env=()
  done
done
if [ "${PROFILE:-0}" != 0 ]; then
  profiled=("${defaults[@]}") && [ "$PROFILE" = pop ] && profiled=(--population "$pop" --size "$size" --generations "$gens")
  data=$(mktemp -d)
  SVC_CRYSTAL_DATA_DIR=$data node --cpu-prof --cpu-prof-dir="$data/prof" bin/crystal.js --debug --backend gpu evolve \
    --material europium_crystal --seed 1 "${profiled[@]}" >"$out/profiled.log" 2>&1
  # the main thread's profile is thread 0's (its name's second number); the workers' are 1 onwards
  cp "$(ls "$data"/prof/*.0.*.cpuprofile | head -1)" "$out/main.cpuprofile"
  rm -rf "$data"
fi
