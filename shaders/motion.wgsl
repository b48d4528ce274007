// What the consciousness publisher reads of a field, summed where it lives (engine/gpu/motion.ts;
// docs/consciousness.md). Every period its motion: sum u^2 and sum (u - u_prev)^2 over one field (its
// own frequency comes from their ratio), and u and u_prev at the cells listed (the phase grid), into
// out = [sum u^2, sum v^2, u of each listed cell, u_prev of each], which one read brings back: some
// 520 bytes a period where the field's whole u and u_prev came back (32 MB at N = 2048). Around a
// dream, its energy by patches (`patches`): side^2 floats (64 at 8 x 8) where the field's u came back.
// And what the Observatory shows of it (`means`): u box-averaged onto side x side, side^2 floats where
// the server's snapshot read the whole u (16 MB at N = 2048) after every change.
// `struct Motion` is generated (engine/gpu/motion.ts). CPU twins: fieldMotion and patchEnergy
// (engine/field/motion.ts), in float64, and downsample (engine/util/downsample.ts), in float32 with the
// same additions in the same order; test: engine/gpu/motion.test.ts.

@group(0) @binding(0) var<uniform> M: Motion;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> prev: array<f32>;
// the listed cells, row-major within the field
@group(0) @binding(3) var<storage, read> listed: array<u32>;
// one pair of sums a workgroup of `partials` (at most 64: engine/gpu/motion.ts GROUPS)
@group(0) @binding(4) var<storage, read_write> sums: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

// workgroup w: the sums over the field's cells [w * chunk, (w + 1) * chunk) into sums[w]
@compute @workgroup_size(TILE * TILE)
fn partials(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let end = min((wid.x + 1u) * M.chunk, M.cells);
  var acc = vec2<f32>(0.0);
  for (var i = wid.x * M.chunk + lid; i < end; i += TILE * TILE) {
    let a = u[M.base + i];
    let v = a - prev[M.base + i];
    acc += vec2<f32>(a * a, v * v);
  }
  partial[lid] = vec4<f32>(acc, 0.0, 0.0);
  reduce_workgroup(lid);
  if (lid == 0u) { sums[wid.x] = partial[0].xy; }
}

// one workgroup: the partial sums added into out[0] and out[1], the listed cells gathered after them
@compute @workgroup_size(TILE * TILE)
fn total(@builtin(local_invocation_index) lid: u32) {
  var acc = vec2<f32>(0.0);
  for (var w = lid; w < M.groups; w += TILE * TILE) { acc += sums[w]; }
  partial[lid] = vec4<f32>(acc, 0.0, 0.0);
  reduce_workgroup(lid);
  if (lid == 0u) {
    out[0] = partial[0].x;
    out[1] = partial[0].y;
  }
  for (var j = lid; j < M.count; j += TILE * TILE) {
    let at = M.base + listed[j];
    out[2u + j] = u[at];
    out[2u + M.count + j] = prev[at];
  }
}

// Patch (i, j) of side x side: cell (x, y) is in patch (x * side / n, y * side / n), so patch (i, j)
// holds columns ceil(i n / side) to ceil((i + 1) n / side) - 1, and the rows alike: (x0, y0, w, h).
fn patch_of(i: u32, j: u32) -> vec4<u32> {
  let x0 = (i * M.n + M.side - 1u) / M.side;
  let y0 = (j * M.n + M.side - 1u) / M.side;
  return vec4<u32>(x0, y0, ((i + 1u) * M.n + M.side - 1u) / M.side - x0, ((j + 1u) * M.n + M.side - 1u) / M.side - y0);
}

// workgroup (i, j): sum u^2 over patch (i, j) into out[j * side + i]
@compute @workgroup_size(TILE * TILE)
fn patches(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let i = wid.x;
  let j = wid.y;
  let p = patch_of(i, j);
  let x0 = p.x;
  let y0 = p.y;
  let w = p.z;
  let h = p.w;
  var acc = 0.0;
  for (var k = lid; k < w * h; k += TILE * TILE) {
    let a = u[M.base + (y0 + k / w) * M.n + x0 + k % w];
    acc += a * a;
  }
  partial[lid] = vec4<f32>(acc, 0.0, 0.0, 0.0);
  reduce_workgroup(lid);
  if (lid == 0u) { out[j * M.side + i] = partial[0].x; }
}

// invocation k: the mean of u over patch k (row-major) into out[k], its cells added row by row from 0
// in f32 as downsample adds them, so the sums are the twin's to the bit. An invocation a patch, not a
// workgroup: 16 workgroups at 64 x 64, where SwiftShader spends some 0.3 ms on each.
@compute @workgroup_size(TILE * TILE)
fn means(@builtin(global_invocation_id) gid: vec3<u32>) {
  let k = gid.x;
  if (k >= M.side * M.side) { return; }
  let p = patch_of(k % M.side, k / M.side);
  var acc = 0.0;
  for (var y = p.y; y < p.y + p.w; y++) {
    for (var x = p.x; x < p.x + p.z; x++) { acc += u[M.base + y * M.n + x]; }
  }
  out[k] = acc / f32(p.z * p.w);
}
