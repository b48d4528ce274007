// The dream's kernels (docs/dream.md, docs/gpu.md): the field never leaves the GPU. Per dream:
// `accumulate` adds |u| to the stability sums at every snapshot of the observation window; then
// `histogram_high` / `select_high` / `histogram_low` / `select_low` find each field's two
// percentile thresholds exactly (a radix select on the float bits: the top 16 bits, then the low
// 16 within the chosen bin; non-negative floats order as their bits do), for the group of fields
// D.first .. D.first + D.count (the histograms of a big batch exceed a buffer); `edit_mask` builds the
// prune/amplify mask and the deep dream's kicks; `blur` smooths the mask (ping-pong between
// mask_in and mask_out, one pass a dispatch); `apply` scales u and u_prev in place and adds the
// kicks; `preview` sums the stability map onto the report's side x side blocks.
// `struct Dream` is generated from engine/field/layouts.ts; shaders/common.wgsl is prepended.
// CPU twins: engine/cpu/dream.ts; test: engine/dream/dream_kernels.test.ts.

@group(0) @binding(0) var<uniform> D: Dream;
@group(0) @binding(1) var<storage, read_write> u: array<f32>;
@group(0) @binding(2) var<storage, read_write> u_prev: array<f32>;
@group(0) @binding(3) var<storage, read_write> acc: array<f32>;
// for the group's fields: [field][65536] for the top bits, then [field][2][65536] for the low bits of each threshold
@group(0) @binding(4) var<storage, read_write> hist: array<atomic<u32>>;
// per field, PLAN_WORDS words: active, key, prune_factor, amplify_factor, mutate_fraction,
// mutate_amplitude (f32 as bits), rank_low, rank_high (the sorted positions the percentiles pick)
@group(0) @binding(5) var<storage, read> plan: array<u32>;
// per field and threshold (low, high): the top-16 bin, the rank left within it, the threshold's bits
@group(0) @binding(6) var<storage, read_write> picks: array<u32>;
// per field: peak |u| (its bits: max of non-negative floats is max of bits), pruned, amplified, mutated
@group(0) @binding(7) var<storage, read_write> tally: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read> mask_in: array<f32>;
@group(0) @binding(9) var<storage, read_write> mask_out: array<f32>;
@group(0) @binding(10) var<storage, read_write> kicks: array<f32>;
@group(0) @binding(11) var<storage, read_write> preview_out: array<f32>;

const PLAN_WORDS = 8u;
const BINS = 65536u;

/** Cell index of a 1D dispatch over every cell of every field (2D grid past 65535 workgroups). */
fn cell_of(gid: vec3<u32>) -> u32 {
  return gid.y * 65535u * 256u + gid.x;
}

@compute @workgroup_size(256)
fn accumulate(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = cell_of(gid);
  if (i < D.cells * D.fields) { acc[i] = acc[i] + abs(u[i]); }
}

@compute @workgroup_size(256)
fn histogram_high(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a dispatch over the group's cells
  let i = D.first * D.cells + cell_of(gid);
  if (i >= (D.first + D.count) * D.cells) { return; }
  let field = i / D.cells;
  atomicAdd(&hist[(field - D.first) * BINS + (bitcast<u32>(acc[i]) >> 16u)], 1u);
  atomicMax(&tally[field * 4u], bitcast<u32>(abs(u[i])));
}

var<workgroup> chunk: array<u32, 256>;

// The bin of hist[base ..] holding sorted position `rank`, and the rank left within that bin:
// 256 threads each sum 256 bins, then one thread walks the chunks and the chosen chunk's bins.
fn select_bin(base: u32, rank: u32, lid: u32) -> vec2<u32> {
  var s = 0u;
  for (var k = 0u; k < 256u; k++) { s += atomicLoad(&hist[base + lid * 256u + k]); }
  chunk[lid] = s;
  workgroupBarrier();
  var found = vec2<u32>(0u, 0u);
  if (lid == 0u) {
    var before = 0u;
    var c = 0u;
    loop {
      if (c >= 255u || before + chunk[c] > rank) { break; }
      before += chunk[c];
      c++;
    }
    var b = c * 256u;
    var r = rank - before;
    loop {
      let h = atomicLoad(&hist[base + b]);
      if (h > r || b == c * 256u + 255u) { break; }
      r -= h;
      b++;
    }
    found = vec2<u32>(b, r);
  }
  return found;
}

// One workgroup per (field, threshold) of the group: workgroup_id.x = (field - D.first) * 2 + which.
@compute @workgroup_size(256)
fn select_high(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let k = D.first * 2u + wid.x;
  let rank = plan[(k / 2u) * PLAN_WORDS + 6u + k % 2u];
  let found = select_bin((wid.x / 2u) * BINS, rank, lid);
  if (lid == 0u) {
    picks[k * 3u] = found.x;
    picks[k * 3u + 1u] = found.y;
  }
}

@compute @workgroup_size(256)
fn histogram_low(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a dispatch over the group's cells
  let i = D.first * D.cells + cell_of(gid);
  if (i >= (D.first + D.count) * D.cells) { return; }
  let field = i / D.cells;
  let bits = bitcast<u32>(acc[i]);
  for (var which = 0u; which < 2u; which++) {
    let k = field * 2u + which;
    let bank = D.count + (field - D.first) * 2u + which;
    if ((bits >> 16u) == picks[k * 3u]) { atomicAdd(&hist[bank * BINS + (bits & 0xffffu)], 1u); }
  }
}

@compute @workgroup_size(256)
fn select_low(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let k = D.first * 2u + wid.x;
  let found = select_bin((D.count + wid.x) * BINS, picks[k * 3u + 1u], lid);
  if (lid == 0u) { picks[k * 3u + 2u] = (picks[k * 3u] << 16u) | found.x; }
}

@compute @workgroup_size(256)
fn edit_mask(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = cell_of(gid);
  if (i >= D.cells * D.fields) { return; }
  let field = i / D.cells;
  let cell = i % D.cells;
  let p = field * PLAN_WORDS;
  var m = 1.0;
  var kick = 0.0;
  if (plan[p] != 0u) {
    let low = bitcast<f32>(picks[field * 6u + 2u]);
    let high = bitcast<f32>(picks[field * 6u + 5u]);
    let s = acc[i];
    if (s < low) {
      m = bitcast<f32>(plan[p + 2u]);
      atomicAdd(&tally[field * 4u + 1u], 1u);
    } else if (s >= high && high > 0.0) {
      m = bitcast<f32>(plan[p + 3u]);
      atomicAdd(&tally[field * 4u + 2u], 1u);
      let key = plan[p + 1u];
      let fraction = bitcast<f32>(plan[p + 4u]);
      // deterministic: a kick where the cell's hash falls under the mutation rate
      if (fraction > 0.0 && (xi(cell, key) + 1.0) / 2.0 < fraction) {
        let peak = bitcast<f32>(atomicLoad(&tally[field * 4u]));
        kick = (bitcast<f32>(plan[p + 5u]) * peak) * xi(cell, lowbias32(key));
        atomicAdd(&tally[field * 4u + 3u], 1u);
      }
    }
  }
  mask_out[i] = m;
  kicks[i] = kick;
}

// One pass of the 3 x 3 box blur, clamped at the edges: the mean over the neighbours that exist,
// summed row by row and multiplied by the float32 reciprocal of their count (INV, from the host).
@compute @workgroup_size(TILE, TILE, 1)
fn blur(@builtin(global_invocation_id) gid: vec3<u32>) {
  let n = D.n;
  if (gid.x >= n || gid.y >= n) { return; }
  let base = gid.z * D.cells;
  var sum = 0.0;
  var count = 0u;
  for (var yy = max(gid.y, 1u) - 1u; yy <= min(n - 1u, gid.y + 1u); yy++) {
    for (var xx = max(gid.x, 1u) - 1u; xx <= min(n - 1u, gid.x + 1u); xx++) {
      sum += mask_in[base + yy * n + xx];
      count++;
    }
  }
  mask_out[base + gid.y * n + gid.x] = sum * INV[count];
}

@compute @workgroup_size(256)
fn apply(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = cell_of(gid);
  if (i >= D.cells * D.fields) { return; }
  let m = mask_in[i];
  let k = kicks[i];
  u[i] = u[i] * m + k;
  u_prev[i] = u_prev[i] * m + k;
}

// One workgroup per (block, field): block k = by * side + bx holds the cells with
// floor(y * side / n) = by and floor(x * side / n) = bx.
@compute @workgroup_size(TILE, TILE, 1)
fn preview(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let side = D.side;
  let n = D.n;
  let by = wid.x / side;
  let bx = wid.x % side;
  let y0 = (by * n + side - 1u) / side;
  let y1 = ((by + 1u) * n + side - 1u) / side;
  let x0 = (bx * n + side - 1u) / side;
  let x1 = ((bx + 1u) * n + side - 1u) / side;
  let width = x1 - x0;
  let count = (y1 - y0) * width;
  var s = 0.0;
  for (var k = lid; k < count; k += TILE * TILE) { s += acc[wid.y * D.cells + (y0 + k / width) * n + x0 + k % width]; }
  partial[lid] = vec4<f32>(s, 0.0, 0.0, 0.0);
  reduce_workgroup(lid);
  if (lid == 0u) { preview_out[wid.y * side * side + wid.x] = partial[0].x; }
}
