// The field kernels: one leapfrog step, and the staggered energy of the state.
// Buffers rotate by bind group, not by copying: a step reads u_prev and u and writes u_next; the
// host then binds (u, u_next, u_prev) as the next (u_prev, u, u_next), three bind groups in a ring.
// Fields of a batch lie one after another (field z at z * n * n); the dispatch's z is the field.
// `struct Params` and `const TILE` (the workgroup's side) are generated from engine/field/params.ts
// and prepended by the host.
// CPU twin: engine/cpu/field_step.ts (same arithmetic, same order); test: engine/field/field_step.test.ts.

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> u_prev: array<f32>;
@group(0) @binding(2) var<storage, read> u: array<f32>;
@group(0) @binding(3) var<storage, read_write> u_next: array<f32>;
// Per tile, four columns (bulk, boundary, saturation, noise) laid out [column][field][tile];
// each tile's own running sum, Kahan-compensated in ledger_comp, so float32 keeps long runs honest.
@group(0) @binding(4) var<storage, read_write> ledger: array<f32>;
@group(0) @binding(5) var<storage, read_write> ledger_comp: array<f32>;

var<workgroup> partial: array<vec4<f32>, TILE * TILE>;

fn read_u(base: u32, x: i32, y: i32) -> f32 {
  let n = i32(P.n);
  if (x < 0 || y < 0 || x >= n || y >= n) { return 0.0; }
  return u[base + u32(y) * P.n + u32(x)];
}

fn read_prev(base: u32, x: i32, y: i32) -> f32 {
  let n = i32(P.n);
  if (x < 0 || y < 0 || x >= n || y >= n) { return 0.0; }
  return u_prev[base + u32(y) * P.n + u32(x)];
}

fn lowbias32(v: u32) -> u32 {
  var x = v;
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}

fn sponge(x: u32, y: u32) -> f32 {
  let d = f32(min(min(x, y), min(P.n - 1u - x, P.n - 1u - y)));
  let t = max(P.sponge_width - d, 0.0) * P.sponge_inv_width;
  return P.sponge_max * (t * t);
}

// Sums `partial` over the workgroup into partial[0]: TILE row sums, then one sum of those.
// Two barriers, not a log2(TILE * TILE) = 8 stage tree: barriers are what costs on small or software GPUs.
// Every invocation must call it.
fn reduce_workgroup(lid: u32) {
  workgroupBarrier();
  if (lid < TILE) {
    var acc = partial[lid * TILE];
    for (var k = 1u; k < TILE; k++) { acc += partial[lid * TILE + k]; }
    partial[lid * TILE] = acc;
  }
  workgroupBarrier();
  if (lid == 0u) {
    var total = partial[0];
    for (var r = 1u; r < TILE; r++) { total += partial[r * TILE]; }
    partial[0] = total;
  }
}

@compute @workgroup_size(TILE, TILE, 1)
fn step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let field = gid.z;
  let base = field * P.n * P.n;
  var work = vec4<f32>(0.0);
  if (gid.x < P.n && gid.y < P.n) {
    let x = i32(gid.x);
    let y = i32(gid.y);
    let i = base + gid.y * P.n + gid.x;
    let uc = u[i];
    let pc = u_prev[i];
    let lap_u = ((read_u(base, x - 1, y) + read_u(base, x + 1, y)) + (read_u(base, x, y - 1) + read_u(base, x, y + 1))) - 4.0 * uc;
    let lap_p = ((read_prev(base, x - 1, y) + read_prev(base, x + 1, y)) + (read_prev(base, x, y - 1) + read_prev(base, x, y + 1))) - 4.0 * pc;
    let vel = uc - pc;
    let f_bulk = P.viscosity * (lap_u - lap_p) - P.damping * vel;
    let f_sponge = -(sponge(gid.x, gid.y) * vel);
    let u2 = uc * uc;
    let sat = (P.nonlinearity * (u2 * uc)) / (1.0 + u2);
    let xi = f32(lowbias32(i ^ P.noise_key) >> 8u) * (1.0 / 8388608.0) - 1.0;
    let noise = P.noise * xi;
    let next = (((((uc + vel) + P.c2 * lap_u) + f_bulk) + f_sponge) - sat) + noise;
    u_next[i] = next;
    let dw = next - pc;
    work = vec4<f32>(-(f_bulk * dw), -(f_sponge * dw), sat * dw, noise * dw);
  }
  partial[lid] = work;
  reduce_workgroup(lid);
  if (lid == 0u) {
    let tile = wid.y * groups.x + wid.x;
    let total = partial[0];
    for (var c = 0u; c < 4u; c++) {
      let k = (c * P.fields + field) * P.tiles_per_field + tile;
      let y = total[c] - ledger_comp[k];
      let t = ledger[k] + y;
      ledger_comp[k] = (t - ledger[k]) - y;
      ledger[k] = t;
    }
  }
}

// Staggered energy per tile: sum (u - prev)^2 + c^2 grad(u).grad(prev), every edge counted once,
// including the edges to the zero border. Bound with u_prev = the state's prev and u = its u;
// writes one float per tile to `ledger` (here the tile-partials buffer), [field][tile].
@compute @workgroup_size(TILE, TILE, 1)
fn energy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
          @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let field = gid.z;
  let base = field * P.n * P.n;
  var e = 0.0;
  if (gid.x < P.n && gid.y < P.n) {
    let x = i32(gid.x);
    let y = i32(gid.y);
    let uc = read_u(base, x, y);
    let pc = read_prev(base, x, y);
    var grad = (uc - read_u(base, x + 1, y)) * (pc - read_prev(base, x + 1, y)) + (uc - read_u(base, x, y + 1)) * (pc - read_prev(base, x, y + 1));
    if (x == 0) { grad += uc * pc; }
    if (y == 0) { grad += uc * pc; }
    e = (uc - pc) * (uc - pc) + P.c2 * grad;
  }
  partial[lid] = vec4<f32>(e, 0.0, 0.0, 0.0);
  reduce_workgroup(lid);
  if (lid == 0u) {
    ledger[field * P.tiles_per_field + wid.y * groups.x + wid.x] = partial[0].x;
  }
}
