// What the consciousness publisher reads of a field, summed where it lives (engine/gpu/motion.ts;
// docs/consciousness.md). Every period its motion: sum u^2 and sum (u - u_prev)^2 over one field (its
// own frequency comes from their ratio), and u and u_prev at the cells listed (the phase grid), into
// out = [sum u^2, sum v^2, u of each listed cell, u_prev of each], which one read brings back: some
// 520 bytes a period where the field's whole u and u_prev came back (32 MB at N = 2048). Around a
// dream, its energy by patches (`patches`): side^2 floats (64 at 8 x 8) where the field's u came back.
// `struct Motion` is generated (engine/gpu/motion.ts). CPU twins: fieldMotion and patchEnergy
// (engine/field/motion.ts), in float64; test: engine/gpu/motion.test.ts.

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

// workgroup (i, j): sum u^2 over patch (i, j) of side x side into out[j * side + i]; cell (x, y) is in
// patch (x * side / n, y * side / n), so patch (i, j) holds columns ceil(i n / side) to ceil((i + 1) n / side) - 1
@compute @workgroup_size(TILE * TILE)
fn patches(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let i = wid.x;
  let j = wid.y;
  let x0 = (i * M.n + M.side - 1u) / M.side;
  let y0 = (j * M.n + M.side - 1u) / M.side;
  let w = ((i + 1u) * M.n + M.side - 1u) / M.side - x0;
  let h = ((j + 1u) * M.n + M.side - 1u) / M.side - y0;
  var acc = 0.0;
  for (var k = lid; k < w * h; k += TILE * TILE) {
    let a = u[M.base + (y0 + k / w) * M.n + x0 + k % w];
    acc += a * a;
  }
  partial[lid] = vec4<f32>(acc, 0.0, 0.0, 0.0);
  reduce_workgroup(lid);
  if (lid == 0u) { out[j * M.side + i] = partial[0].x; }
}
