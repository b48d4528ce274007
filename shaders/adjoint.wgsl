// Recall's adjoint sweep on the GPU (docs/recall.md, docs/gpu.md): the live field is run back
// through the adjoint of the linear step and the dream edits, and at each write moment every
// pattern's correlation with the readout a + b is reduced per tile; the host's sum_rows
// (shaders/reduce.wgsl) folds the tiles into one score per pattern, so only scores come back.
// The covector (a, b) lives in a_cur / b; a step writes a_next and updates b in place (b's new
// value needs only a and b at its own cell), then the host swaps a_cur and a_next by bind group.
// `struct Params` (the step's, with `fields` = the number of patterns read) and `const TILE` are
// generated; shaders/common.wgsl is prepended.
// A saturating field's sweep subtracts the secant k_t (step_k), which `secant` wrote into one row
// per step as the field step (shaders/field_step.wgsl) reran the field's path on a scratch copy.
// `product` is static: a question's rest products <Q w_q, w_p> with the patterns of the moments it
// splits (recall's Gram entries between the question and a moment's memories), in the same sweep.
// CPU twin: AdjointField in engine/recall/adjoint.ts (k from engine/recall/path.ts), and
// CpuAdjointRunner's products (engine/recall/runner.ts); test: engine/recall/adjoint_gpu.test.ts.

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> a_cur: array<f32>;
@group(0) @binding(2) var<storage, read_write> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> a_next: array<f32>;
// `init` reads the field's u and u_prev here; `readout` and `product` read a window of the patterns
// ([pattern][cell]) at 4, and `product` its pattern q through another at 5
@group(0) @binding(4) var<storage, read> src_u: array<f32>;
@group(0) @binding(5) var<storage, read> src_prev: array<f32>;
@group(0) @binding(6) var<storage, read_write> partials: array<f32>;
@group(0) @binding(7) var<storage, read> mask: array<f32>;
// k along the path, [step][cell]; `row` picks the step (a 256-byte slot per step, by offset)
@group(0) @binding(8) var<storage, read_write> secants: array<f32>;
// (`row` is the reading's first entry in `picks`: for `readout`, where each pattern it reads starts
// in its window, in floats; for `product`, where q starts in its own window, then where the patterns
// it is multiplied with start in theirs; and `count`, the patterns it scores)
struct Row { index: u32, count: u32 }
@group(0) @binding(9) var<uniform> row: Row;
@group(0) @binding(10) var<storage, read> picks: array<u32>;

fn inside(x: i32, y: i32) -> bool {
  let n = i32(P.n);
  return x >= 0 && y >= 0 && x < n && y < n;
}

// Storage pointers cannot be passed to functions without a WGSL extension, so one reader per array.
fn at_a(x: i32, y: i32) -> f32 { if (!inside(x, y)) { return 0.0; } return a_cur[u32(y) * P.n + u32(x)]; }
fn at_u(x: i32, y: i32) -> f32 { if (!inside(x, y)) { return 0.0; } return src_u[u32(y) * P.n + u32(x)]; }
fn at_prev(x: i32, y: i32) -> f32 { if (!inside(x, y)) { return 0.0; } return src_prev[u32(y) * P.n + u32(x)]; }
fn at_q(base: u32, x: i32, y: i32) -> f32 { if (!inside(x, y)) { return 0.0; } return src_prev[base + u32(y) * P.n + u32(x)]; }

// The covector of the energy form at the live state: a = d + c^2/2 Q u_prev, b = -d + c^2/2 Q u.
@compute @workgroup_size(TILE, TILE, 1)
fn init(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= P.n || gid.y >= P.n) { return; }
  let x = i32(gid.x);
  let y = i32(gid.y);
  let i = gid.y * P.n + gid.x;
  let half = P.c2 / 2.0;
  let d = src_u[i] - src_prev[i];
  let q_prev = (((4.0 * at_prev(x, y) - at_prev(x - 1, y)) - at_prev(x + 1, y)) - at_prev(x, y - 1)) - at_prev(x, y + 1);
  let q_u = (((4.0 * at_u(x, y) - at_u(x - 1, y)) - at_u(x + 1, y)) - at_u(x, y - 1)) - at_u(x, y + 1);
  a_next[i] = d + half * q_prev;
  b[i] = -d + half * q_u;
}

// One step back: a' = (2 - loss - k) a + (c^2 + v) L a + b, b' = (loss - 1) a - v L a.
fn back(gid: vec3<u32>, k: f32) {
  let x = i32(gid.x);
  let y = i32(gid.y);
  let i = gid.y * P.n + gid.x;
  let ac = a_cur[i];
  let lap = (((at_a(x - 1, y) + at_a(x + 1, y)) + at_a(x, y - 1)) + at_a(x, y + 1)) - 4.0 * ac;
  let loss = P.damping + sponge_strength(P.n, P.sponge_width, P.sponge_inv_width, P.sponge_max, gid.x, gid.y);
  a_next[i] = ((2.0 - loss - k) * ac + (P.c2 + P.viscosity) * lap) + b[i];
  b[i] = (loss - 1.0) * ac - P.viscosity * lap;
}

@compute @workgroup_size(TILE, TILE, 1)
fn step(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= P.n || gid.y >= P.n) { return; }
  back(gid, 0.0);
}

// The step back over a saturating step: k of that step from its row.
@compute @workgroup_size(TILE, TILE, 1)
fn step_k(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= P.n || gid.y >= P.n) { return; }
  back(gid, secants[row.index * P.n * P.n + gid.y * P.n + gid.x]);
}

// k = b u^2 / (1 + u^2) of the path's u (src_u) into its row, before the field step takes it on.
@compute @workgroup_size(TILE, TILE, 1)
fn secant(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= P.n || gid.y >= P.n) { return; }
  let i = gid.y * P.n + gid.x;
  let u = src_u[i];
  secants[row.index * P.n * P.n + i] = (P.nonlinearity * (u * u)) / (1.0 + u * u);
}

// The adjoint of multiplying u and u_prev by a mask is the same multiplication (a_next is the covector's a here).
@compute @workgroup_size(TILE, TILE, 1)
fn scale(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= P.n || gid.y >= P.n) { return; }
  let i = gid.y * P.n + gid.x;
  a_next[i] *= mask[i];
  b[i] *= mask[i];
}

// A reading scores up to four patterns an invocation (PER_INVOCATION), one in each lane of the
// workgroup's vec4 sum, and a workgroup sums READ_BANDS bands of TILE rows (its tile is TILE x
// READ_BANDS TILE cells, `tiles_per_field` of them a pattern): the covector (or Q w_q) is loaded once
// for the four, and a workgroup's reduction, whose barriers and serial adds cost more than its loads
// at TILE x TILE cells, is taken a quarter as often. (`const PER_INVOCATION` and `const READ_BANDS`
// come from the host, engine/gpu/adjoint.ts, which sizes the dispatches and partials by them.)

// The row of an invocation's cell in band `r` of its workgroup's tile.
fn band_row(gid: vec3<u32>, wid: vec3<u32>, r: u32) -> u32 {
  return (wid.y * READ_BANDS + r) * TILE + gid.y % TILE;
}

// Per tile and pattern picked (the patterns 4 gid.z .. 4 gid.z + 3 this reading reads): sum (a + b) w;
// partials [pattern][tile].
@compute @workgroup_size(TILE, TILE, 1)
fn readout(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
           @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let first = PER_INVOCATION * gid.z;
  var s = vec4<f32>(0.0);
  for (var r = 0u; r < READ_BANDS; r++) {
    let y = band_row(gid, wid, r);
    if (gid.x < P.n && y < P.n) {
      let i = y * P.n + gid.x;
      let c = a_cur[i] + b[i];
      for (var k = 0u; k < PER_INVOCATION && first + k < row.count; k++) {
        s[k] += c * src_u[picks[row.index + first + k] + i];
      }
    }
  }
  scored(s, lid, first, wid.y * groups.x + wid.x);
}

// Per tile and pattern picked after the first (as readout's): sum (Q w_q) w_p, w_q the first pattern
// picked, Q = -L with the zero border (no c^2); partials [pattern][tile].
@compute @workgroup_size(TILE, TILE, 1)
fn product(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
           @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let first = PER_INVOCATION * gid.z;
  let q = picks[row.index];
  var s = vec4<f32>(0.0);
  for (var r = 0u; r < READ_BANDS; r++) {
    let y = band_row(gid, wid, r);
    if (gid.x < P.n && y < P.n) {
      let x = i32(gid.x);
      let yi = i32(y);
      let qw = (((4.0 * at_q(q, x, yi) - at_q(q, x - 1, yi)) - at_q(q, x + 1, yi)) - at_q(q, x, yi - 1)) - at_q(q, x, yi + 1);
      for (var k = 0u; k < PER_INVOCATION && first + k < row.count; k++) {
        s[k] += qw * src_u[picks[row.index + 1u + first + k] + y * P.n + gid.x];
      }
    }
  }
  scored(s, lid, first, wid.y * groups.x + wid.x);
}

// The workgroup's sums of `s`, lane k that of pattern first + k, into partials [pattern][tile].
fn scored(s: vec4<f32>, lid: u32, first: u32, tile: u32) {
  partial[lid] = s;
  reduce_workgroup(lid);
  if (lid == 0u) {
    for (var k = 0u; k < PER_INVOCATION && first + k < row.count; k++) {
      partials[(first + k) * P.tiles_per_field + tile] = partial[0][k];
    }
  }
}
