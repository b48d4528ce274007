// Helpers shared by the kernel modules; the host prepends this file (and `const TILE`) to each.
// CPU twins: lowbias32 in engine/field/noise.ts, sponge_strength in engine/cpu/field_step.ts (sponge).

fn lowbias32(v: u32) -> u32 {
  var x = v;
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}

/** Uniform in [-1, 1): the top 24 bits of the hash as an exact float32 (engine/field/noise.ts xi). */
fn xi(cell: u32, key: u32) -> f32 {
  return f32(lowbias32(cell ^ key) >> 8u) * (1.0 / 8388608.0) - 1.0;
}

/** The boundary sponge at (x, y) of an n x n field: sponge_max * t^2, t the depth into the layer. */
fn sponge_strength(n: u32, width: f32, inv_width: f32, max_strength: f32, x: u32, y: u32) -> f32 {
  let d = f32(min(min(x, y), min(n - 1u - x, n - 1u - y)));
  let t = max(width - d, 0.0) * inv_width;
  return max_strength * (t * t);
}

var<workgroup> partial: array<vec4<f32>, TILE * TILE>;

// Sums `partial` over the workgroup into partial[0]: `rows` row sums of TILE, then one sum of those.
// Two barriers, not a log2 stage tree: barriers are what costs on small or software GPUs.
// Every invocation must call it.
fn reduce_rows(lid: u32, rows: u32) {
  workgroupBarrier();
  if (lid < rows) {
    var acc = partial[lid * TILE];
    for (var k = 1u; k < TILE; k++) { acc += partial[lid * TILE + k]; }
    partial[lid * TILE] = acc;
  }
  workgroupBarrier();
  if (lid == 0u) {
    var total = partial[0];
    for (var r = 1u; r < rows; r++) { total += partial[r * TILE]; }
    partial[0] = total;
  }
}

/** reduce_rows over a whole TILE x TILE workgroup. */
fn reduce_workgroup(lid: u32) {
  reduce_rows(lid, TILE);
}
