// The field kernels: one leapfrog step, and the staggered energy of the state.
// Buffers rotate by bind group, not by copying: a step reads u_prev and u and writes u_next; the
// host then binds (u, u_next, u_prev) as the next (u_prev, u, u_next), three bind groups in a ring.
// Fields of a batch lie one after another (field z at z * n * n); the dispatch's z is the field.
// `struct Params` and `const TILE` (the workgroup's side) are generated from engine/field/params.ts
// and prepended by the host, with shaders/common.wgsl (the hash, the sponge, the workgroup sum) and
// the step's tile sum (shaders/tile_sum.wgsl, or tile_sum_subgroups.wgsl where the device has subgroups).
// CPU twin: engine/cpu/field_step.ts (same arithmetic, same order); test: engine/field/field_step.test.ts.

// false: the step without a timeline sample's energy (P.energy_at is then never read), for engines
// that sample no timeline (evolve's batches): the compiler drops that code, and on SwiftShader the
// step compiles in 4.1 s where the whole kernel takes 7.1 s. The same bits for every step it takes.
override SAMPLED: bool = true;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> u_prev: array<f32>;
@group(0) @binding(2) var<storage, read> u: array<f32>;
@group(0) @binding(3) var<storage, read_write> u_next: array<f32>;
// step: each tile's four ledger terms of this step (bulk, boundary, saturation, noise), written to
// ring slot P.ledger_slot as [slot][field][tile][column]; shaders/reduce.wgsl's fold_ledger adds the
// slots into the Kahan-compensated books later, in step order. A store the step never waits on,
// where a read-modify-write of the books every step kept each workgroup alive for two round trips.
// step, where P.energy_at is not 0: each tile's energy of the state it reads (a timeline sample of
// the step before, so the sample needs no pass over the field of its own) at P.energy_at, [field][tile].
// energy, potential: one float per TILE x TILE tile, [field][tile].
@group(0) @binding(4) var<storage, read_write> tile_sums: array<f32>;
// step, steps: the step's table (engine/field/params.ts stepTable): per field the field whose random
// numbers it draws (its own; a rerun's first run's; or, in a batch extracted from another, its field's
// there: drawTable), with RESTING set where it rests until its injection; then per field the steps it
// rested, by which its noise is keyed by its own steps.
@group(0) @binding(6) var<storage, read> draws: array<u32>;
const RESTING: u32 = 0x80000000u;

// The step's tile is STEP_W x STEP_H cells (host constants, engine/gpu/context.ts; the energy
// kernels keep TILE x TILE): a workgroup of STEP_W x (STEP_H / ROWS) invocations, each computing ROWS
// cells down its column, so the tile's sum (a barrier, the subgroup sums) is paid once per ROWS cells.

// A neighbour's value, 0 past the border: the load clamped into the field and its value selected, not
// branched around (the same values; SwiftShader compiles the step's edge tiles, 8 rows of 8 such reads,
// in 2.7 s where the branches took 3.9 s, docs/gpu.md).
fn clamped(base: u32, x: i32, y: i32) -> u32 {
  let last = i32(P.n) - 1;
  return base + u32(clamp(y, 0, last)) * P.n + u32(clamp(x, 0, last));
}

fn inside(x: i32, y: i32) -> bool {
  let n = i32(P.n);
  return x >= 0 && y >= 0 && x < n && y < n;
}

fn read_u(base: u32, x: i32, y: i32) -> f32 {
  return select(0.0, u[clamped(base, x, y)], inside(x, y));
}

fn read_prev(base: u32, x: i32, y: i32) -> f32 {
  return select(0.0, u_prev[clamped(base, x, y)], inside(x, y));
}

fn sponge(x: u32, y: u32) -> f32 {
  return sponge_strength(P.n, P.sponge_width, P.sponge_inv_width, P.sponge_max, x, y);
}

// One cell's update from its value uc and u_prev's pc, its 4 neighbours in u (nu) and in u_prev (np),
// left, right, up, down, its sponge strength s and its noise: the next value and the cell's 4 ledger
// terms. The single step (`cell`) and the several-step kernel (shaders/field_steps.wgsl) both take it.
struct Update {
  next: f32,
  work: vec4<f32>,
}

fn update(uc: f32, pc: f32, nu: vec4<f32>, np: vec4<f32>, s: f32, noise: f32) -> Update {
  let lap_u = ((nu.x + nu.y) + (nu.z + nu.w)) - 4.0 * uc;
  let lap_p = ((np.x + np.y) + (np.z + np.w)) - 4.0 * pc;
  let vel = uc - pc;
  let f_bulk = P.viscosity * (lap_u - lap_p) - P.damping * vel;
  let f_sponge = -(s * vel);
  let u2 = uc * uc;
  let sat = (P.nonlinearity * (u2 * uc)) / (1.0 + u2);
  let next = (((((uc + vel) + P.c2 * lap_u) + f_bulk) + f_sponge) - sat) + noise;
  let dw = next - pc;
  return Update(next, vec4<f32>(-(f_bulk * dw), -(f_sponge * dw), sat * dw, noise * dw));
}

// A field's noise: its amplitude (a rerun's field's louder: engine/field/params.ts Rerun), and what the
// index of a cell's draw is less than the cell's: the field drawn's cells stand in for the field's
// (u32 arithmetic wraps, so a field drawn after its own gives the same index as in the float64 twin).
// `rests`: the field is held at 0 until its injection (EngineOptions.rest_until_injected); `rested`:
// the steps it rested; `key`: its noise key at the dispatch's first step (field_key).
struct FieldNoise {
  amp: f32,
  drawn: u32,
  rests: bool,
  rested: u32,
  key: u32,
}

// The noise key of the dispatch's step k for a field that rested `rested` steps: noiseKey(seed, step -
// rested), its own step's (engine/field/noise.ts); the host's key for that step where it never rested.
fn field_key(rested: u32, k: u32, key: u32) -> u32 {
  if (rested == 0u) { return key; }
  return lowbias32((P.step + k - rested) ^ P.seed_key);
}

fn field_noise(field: u32) -> FieldNoise {
  let rerun = field >= P.rerun_from;
  let entry = draws[field];
  let rested = draws[P.fields + field];
  let drawn = (field - (entry & ~RESTING)) * P.n * P.n;
  return FieldNoise(select(P.noise, P.rerun_noise, rerun), drawn, (entry & RESTING) != 0u, rested, field_key(rested, 0u, P.noise_key));
}

// Cell i's update, with its field's noise, into u_next[i]; returns the cell's 4 ledger terms.
fn cell(i: u32, nu: vec4<f32>, np: vec4<f32>, s: f32, noise: FieldNoise) -> vec4<f32> {
  let r = update(u[i], u_prev[i], nu, np, s, noise.amp * xi(i - noise.drawn, noise.key));
  u_next[i] = r.next;
  return r.work;
}

// The staggered energy of one cell of the state (u, u_prev): its values uc, pc, and those of its right
// (ur, pr) and lower (ud, pd) neighbours, 0 past the border; every edge counted once, the edges to
// the zero border at x = 0 and y = 0 too. The `energy` kernel's and the step's (a sample's).
fn cell_energy(uc: f32, pc: f32, ur: f32, pr: f32, ud: f32, pd: f32, x: u32, y: u32) -> f32 {
  var grad = (uc - ur) * (pc - pr) + (uc - ud) * (pc - pd);
  if (x == 0u) { grad += uc * pc; }
  if (y == 0u) { grad += uc * pc; }
  return (uc - pc) * (uc - pc) + P.c2 * grad;
}

// `Lanes` and `tile_total` come from shaders/tile_sum.wgsl or tile_sum_subgroups.wgsl (the host picks).
@compute @workgroup_size(STEP_W, STEP_H / ROWS, 1)
fn step(@builtin(local_invocation_id) local: vec3<u32>, lanes: Lanes,
        @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let field = wid.z;
  let base = field * P.n * P.n;
  let noise = field_noise(field);
  let x0 = wid.x * STEP_W;
  let y0 = wid.y * STEP_H;
  let gx = x0 + local.x;
  // Both are the same for the whole workgroup (a uniform branch). `inner`: the tile and its 1-cell
  // halo lie inside the field, so no neighbour read needs its bounds check. `calm`: every cell is at
  // least sponge_width deep, where sponge_strength is exactly 0 (max(width - d, 0) is 0), so it is
  // not computed: the same arithmetic either way, the same bits.
  let inner = x0 > 0u && y0 > 0u && x0 + STEP_W < P.n && y0 + STEP_H < P.n;
  let calm = inner && f32(min(min(x0, y0), min(P.n - x0 - STEP_W, P.n - y0 - STEP_H))) >= P.sponge_width;
  let sampled = SAMPLED && P.energy_at != 0u;
  var work = vec4<f32>(0.0);
  var e = 0.0;
  if (inner && !noise.rests) {
    for (var r = 0u; r < ROWS; r++) {
      let gy = y0 + local.y + r * (STEP_H / ROWS);
      let i = base + gy * P.n + gx;
      var s = 0.0;
      if (!calm) { s = sponge(gx, gy); }
      let nu = vec4<f32>(u[i - 1u], u[i + 1u], u[i - P.n], u[i + P.n]);
      let np = vec4<f32>(u_prev[i - 1u], u_prev[i + 1u], u_prev[i - P.n], u_prev[i + P.n]);
      if (sampled) { e += cell_energy(u[i], u_prev[i], nu.y, np.y, nu.w, np.w, gx, gy); }
      work += cell(i, nu, np, s, noise);
    }
  } else {
    for (var r = 0u; r < ROWS; r++) {
      let gy = y0 + local.y + r * (STEP_H / ROWS);
      if (gx < P.n && gy < P.n) {
        let x = i32(gx);
        let y = i32(gy);
        let i = base + gy * P.n + gx;
        if (noise.rests) {
          // held at 0, its ledger terms 0: nothing read but a sample's energy of the state (0 as it rests)
          if (sampled) { e += cell_energy(u[i], u_prev[i], read_u(base, x + 1, y), read_prev(base, x + 1, y), read_u(base, x, y + 1), read_prev(base, x, y + 1), gx, gy); }
          u_next[i] = 0.0;
        } else {
          let nu = vec4<f32>(read_u(base, x - 1, y), read_u(base, x + 1, y), read_u(base, x, y - 1), read_u(base, x, y + 1));
          let np = vec4<f32>(read_prev(base, x - 1, y), read_prev(base, x + 1, y), read_prev(base, x, y - 1), read_prev(base, x, y + 1));
          if (sampled) { e += cell_energy(u[i], u_prev[i], nu.y, np.y, nu.w, np.w, gx, gy); }
          work += cell(i, nu, np, sponge(gx, gy), noise);
        }
      }
    }
  }
  let tile = wid.y * groups.x + wid.x;
  let total = tile_total(lanes, work);
  if (lanes.lid == 0u) {
    let k = 4u * ((P.ledger_slot * P.fields + field) * P.tiles_per_field + tile);
    tile_sums[k] = total.x;
    tile_sums[k + 1u] = total.y;
    tile_sums[k + 2u] = total.z;
    tile_sums[k + 3u] = total.w;
  }
  if (sampled) {
    // the ledger's sum is read (by invocation 0) before the shared memory takes the energy's
    workgroupBarrier();
    let energy = tile_total(lanes, vec4<f32>(e, 0.0, 0.0, 0.0));
    if (lanes.lid == 0u) { tile_sums[P.energy_at + field * P.tiles_per_field + tile] = energy.x; }
  }
}

// Staggered energy per tile: sum (u - prev)^2 + c^2 grad(u).grad(prev), every edge counted once,
// including the edges to the zero border. Bound with u_prev = the state's prev and u = its u;
// writes one float per tile to `tile_sums` (here the tile-partials buffer), [field][tile].
@compute @workgroup_size(TILE, TILE, 1)
fn energy(@builtin(global_invocation_id) gid: vec3<u32>, lanes: Lanes,
          @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let field = gid.z;
  let base = field * P.n * P.n;
  var e = 0.0;
  if (gid.x < P.n && gid.y < P.n) {
    let x = i32(gid.x);
    let y = i32(gid.y);
    e = cell_energy(read_u(base, x, y), read_prev(base, x, y), read_u(base, x + 1, y), read_prev(base, x + 1, y),
                    read_u(base, x, y + 1), read_prev(base, x, y + 1), gid.x, gid.y);
  }
  let total = workgroup_total(lanes, e);
  if (lanes.lid == 0u) {
    tile_sums[field * groups.x * groups.y + wid.y * groups.x + wid.x] = total;
  }
}

// Saturation potential per tile: sum V(u) + V(u_prev), V(u) = b/2 (u^2 - ln(1 + u^2)), so the books
// of a write or a dream edit need no read-back ([field][tile] into the tile-partials buffer).
// u^2 - ln(1 + u^2) cancels for small u: below 0.01 its series u^4/2 - u^6/3 + u^8/4 is used instead.
// CPU twin: saturationPotential in engine/cpu/field_step.ts (float64, log1p).
fn excess(u: f32) -> f32 {
  let s = u * u;
  if (s < 0.01) { return s * s * (0.5 - s * (1.0 / 3.0 - s * 0.25)); }
  return s - log(1.0 + s);
}

@compute @workgroup_size(TILE, TILE, 1)
fn potential(@builtin(global_invocation_id) gid: vec3<u32>, lanes: Lanes,
             @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let field = gid.z;
  var v = 0.0;
  if (gid.x < P.n && gid.y < P.n) {
    let i = field * P.n * P.n + gid.y * P.n + gid.x;
    v = 0.5 * P.nonlinearity * (excess(u[i]) + excess(u_prev[i]));
  }
  let total = workgroup_total(lanes, v);
  if (lanes.lid == 0u) {
    tile_sums[field * groups.x * groups.y + wid.y * groups.x + wid.x] = total;
  }
}
