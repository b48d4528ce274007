// Encoding version 3's wavefront made on the device (docs/recall.md, "The encoding"; engine/gpu/encode3.ts
// drives it). A text's parts go through one i32 part buffer ((n + 4)^2, a 2-cell border) in order:
// first pass `clear_part`, `render` (one invocation a source, 16 atomic adds: integer sums, so the
// order of the adds does not matter) and `energy` (sum of v^2 over the inner cells, exact in 64 bits);
// the host reads the energies, takes s_p in float64 and sends f32(s_p); second pass the parts are
// rendered again and `combine`d into out in part order, then `peak` (max |out|) and `finish`
// (out /= peak, and sum += out * importance: the write's superposition of its texts).
// `struct Encode3` is generated (engine/gpu/encode3.ts ENCODE3_LAYOUT).
// CPU twin: engine/encode/text3.ts typescriptPasses (same operations, same order); test:
// engine/gpu/encode3.test.ts.

@group(0) @binding(0) var<uniform> E: Encode3;
// W[fy][fx][ty][tx] (text3.ts weightTable)
@group(0) @binding(1) var<storage, read> table: array<i32>;
// the resident parts' streams, `words` u32 each (x, y a source)
@group(0) @binding(2) var<storage, read> streams: array<u32>;
@group(0) @binding(3) var<storage, read_write> part: array<atomic<i32>>;
// [part] (lo, hi) words of the exact energy, then the peak's bits at E.peak_at
@group(0) @binding(4) var<storage, read_write> sums: array<atomic<u32>>;
// [part] f32(s_p)
@group(0) @binding(5) var<storage, read> scales: array<f32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;
@group(0) @binding(7) var<storage, read_write> sum: array<f32>;

// a workgroup's partial sums (energy's 64-bit words) and maxima (peak's, in lows)
var<workgroup> lows: array<u32, 256>;
var<workgroup> highs: array<u32, 256>;

fn index_of(gid: vec3<u32>) -> u32 {
  // a 2D grid past 65535 workgroups
  return gid.y * 65535u * 256u + gid.x;
}

@compute @workgroup_size(256)
fn clear_part(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = index_of(gid);
  if (i < E.stride * E.stride) { atomicStore(&part[i], 0); }
}

@compute @workgroup_size(256)
fn clear_out(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = index_of(gid);
  if (i < E.n * E.n) { out[i] = 0.0; }
  if (i == 0u) { atomicStore(&sums[E.peak_at], 0u); }
}

// lo + floor(w span / 2^32) (text3.ts gridSource), the 48-bit product taken in 16-bit halves of w:
// span < 2^16 (n <= 4,096), so wh span + (wl span >> 16) < 2^32.
fn grid(w: u32) -> u32 {
  let high = (w >> 16u) * E.span;
  let low = (w & 0xffffu) * E.span;
  return E.lo + ((high + (low >> 16u)) >> 16u);
}

@compute @workgroup_size(256)
fn render(@builtin(global_invocation_id) gid: vec3<u32>) {
  let k = index_of(gid);
  if (k >= E.sources) { return; }
  let wx = streams[E.stream_at + 2u * k];
  let x = grid(wx);
  let y = grid(streams[E.stream_at + 2u * k + 1u]);
  let sign = select(-1, 1, (wx & 1u) == 1u);
  let first = ((y >> 4u) + ((y & 15u) >> 3u)) * E.stride + (x >> 4u) + ((x & 15u) >> 3u);
  let block = ((y & 15u) * 16u + (x & 15u)) * 16u;
  for (var ty = 0u; ty < 4u; ty++) {
    for (var tx = 0u; tx < 4u; tx++) {
      atomicAdd(&part[first + ty * E.stride + tx], sign * table[block + ty * 4u + tx]);
    }
  }
}

// v^2 as (lo, hi) u32 words: |v| = a 2^16 + b, v^2 = a^2 2^32 + 2ab 2^16 + b^2.
fn square(v: i32) -> vec2<u32> {
  let m = u32(abs(v)); // |v| <= 2^31 fits a u32
  let a = m >> 16u;
  let b = m & 0xffffu;
  let mid = a * b; // < 2^32; 2 mid 2^16 split into its words
  let low = b * b;
  let mid_low = mid << 17u;
  let lo = low + mid_low;
  let carry = select(0u, 1u, lo < low);
  return vec2<u32>(lo, a * a + (mid >> 15u) + carry);
}

fn add64(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
  let lo = x.x + y.x;
  return vec2<u32>(lo, x.y + y.y + select(0u, 1u, lo < x.x));
}

// Exact modulo 2^64 (a part's sum stays far below it: |v| < 2^20 gives < 2^40 n^2). Each workgroup adds its
// 64-bit sum into the part's words with two atomic adds, the carry taken from the low word's old value.
@compute @workgroup_size(256)
fn energy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = index_of(gid);
  var s = vec2<u32>(0u, 0u);
  if (i < E.n * E.n) {
    let r = i / E.n + 2u;
    let c = i % E.n + 2u;
    s = square(atomicLoad(&part[r * E.stride + c]));
  }
  lows[lid] = s.x;
  highs[lid] = s.y;
  workgroupBarrier();
  for (var h = 128u; h > 0u; h >>= 1u) {
    if (lid < h) {
      let t = add64(vec2<u32>(lows[lid], highs[lid]), vec2<u32>(lows[lid + h], highs[lid + h]));
      lows[lid] = t.x;
      highs[lid] = t.y;
    }
    workgroupBarrier();
  }
  if (lid == 0u && (lows[0] != 0u || highs[0] != 0u)) {
    let old = atomicAdd(&sums[2u * E.part], lows[0]);
    atomicAdd(&sums[2u * E.part + 1u], highs[0] + select(0u, 1u, old + lows[0] < old));
  }
}

// out = f32(out + f32(f32(v) * s)), cell by cell (a fused multiply-add on some hardware: docs/gpu.md)
@compute @workgroup_size(256)
fn combine(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = index_of(gid);
  if (i >= E.n * E.n) { return; }
  let v = atomicLoad(&part[(i / E.n + 2u) * E.stride + i % E.n + 2u]);
  out[i] = out[i] + f32(v) * scales[E.part];
}

// max |out|: non-negative f32 values order as their bits do. Each workgroup's maximum first, then one
// atomicMax a workgroup: one atomic a cell on a single word would serialize (4 M of them at N = 2048).
@compute @workgroup_size(256)
fn peak(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = index_of(gid);
  var m = 0u;
  if (i < E.n * E.n) { m = bitcast<u32>(abs(out[i])); }
  lows[lid] = m;
  workgroupBarrier();
  for (var h = 128u; h > 0u; h >>= 1u) {
    if (lid < h) { lows[lid] = max(lows[lid], lows[lid + h]); }
    workgroupBarrier();
  }
  if (lid == 0u) { atomicMax(&sums[E.peak_at], lows[0]); }
}

@compute @workgroup_size(256)
fn finish(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = index_of(gid);
  if (i >= E.n * E.n) { return; }
  var d = bitcast<f32>(atomicLoad(&sums[E.peak_at]));
  if (d == 0.0) { d = 1.0; }
  let w = out[i] / d;
  out[i] = w;
  sum[i] = sum[i] + w * E.importance;
}
