// STEPS leapfrog steps in one dispatch, for runs that sample no timeline (evolve's batches): at small
// sides a step is a few microseconds of a GPU, and a dispatch each (its host call and the barrier
// between dispatches) costs more than the cells. Appended to shaders/field_step.wgsl, whose `update`,
// sponge, noise and tile sum it takes, so a cell's arithmetic is the single step's to the bit.
// Host: engine/gpu/backend.ts (submitSteps; STEPS_PER_DISPATCH in engine/field/layouts.ts, with the
// constant STEPS prepended). Test: engine/field/field_step.test.ts (the same field and books as STEPS
// single steps, and so as the CPU twin's).
//
// A workgroup loads its STEP_W x STEP_H tile and a halo STEPS cells wide (u_prev and u, 0 past the
// field's border) into shared memory, then takes STEPS sub-steps there: sub-step k updates the tile and
// the ring STEPS - 1 - k cells round it, which is what the later sub-steps read. The tile's cells are
// each updated by the invocation and in the order of the single step, so the tile's ledger terms are
// the single step's sums, stored in ring slot P.ledger_slot + k. At the end the tile writes its last
// two states: u_(STEPS - 1) to u_next (binding 3) and u_STEPS to u_after, a fourth buffer, since the
// neighbouring tiles may still be reading their halos from u_prev and u.

@group(0) @binding(5) var<storage, read_write> u_after: array<f32>;

const REGION_W: u32 = STEP_W + 2u * STEPS;
const REGION_H: u32 = STEP_H + 2u * STEPS;
const INVOCATIONS: u32 = STEP_W * (STEP_H / ROWS);

// three states in turn: sub-step k reads states[k % 3] (u_prev) and states[(k + 1) % 3] (u) and
// writes states[(k + 2) % 3]. A place past the field's border is loaded as 0 and never written.
var<workgroup> states: array<array<f32, REGION_W * REGION_H>, 3>;

/** Updates the cell at `j` of the region (global x, y) in shared memory; returns its 4 ledger terms. */
fn advance(k: u32, j: u32, x: u32, y: u32, base: u32, noise: FieldNoise, key: u32) -> vec4<f32> {
  let p = k % 3u;
  let c = (k + 1u) % 3u;
  let nu = vec4<f32>(states[c][j - 1u], states[c][j + 1u], states[c][j - REGION_W], states[c][j + REGION_W]);
  let np = vec4<f32>(states[p][j - 1u], states[p][j + 1u], states[p][j - REGION_W], states[p][j + REGION_W]);
  if (noise.rests) {
    // held at 0 (EngineOptions.rest_until_injected), as the single step holds it
    states[(k + 2u) % 3u][j] = 0.0;
    return vec4<f32>(0.0);
  }
  let i = base + y * P.n + x;
  let r = update(states[c][j], states[p][j], nu, np, sponge(x, y), noise.amp * xi(i - noise.drawn, key));
  states[(k + 2u) % 3u][j] = r.next;
  return r.work;
}

@compute @workgroup_size(STEP_W, STEP_H / ROWS, 1)
fn steps(@builtin(local_invocation_id) local: vec3<u32>, lanes: Lanes,
         @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let x0 = wid.x * STEP_W;
  let y0 = wid.y * STEP_H;
  // the region's corner, STEPS cells up and left of the tile's
  let rx = i32(x0) - i32(STEPS);
  let ry = i32(y0) - i32(STEPS);
  let field = wid.z;
  let base = field * P.n * P.n;
  let noise = field_noise(field);
  for (var j = lanes.lid; j < REGION_W * REGION_H; j += INVOCATIONS) {
    let x = rx + i32(j % REGION_W);
    let y = ry + i32(j / REGION_W);
    states[0][j] = read_prev(base, x, y);
    states[1][j] = read_u(base, x, y);
    // 0 past the border without counting on WebGPU's zeroing of workgroup memory (Dawn can turn it off)
    states[2][j] = 0.0;
  }
  var keys = array<u32, STEPS>(P.noise_key, P.key_1, P.key_2, P.key_3);
  // a field that rested keys its noise by its own steps
  for (var k = 0u; k < STEPS; k++) { keys[k] = field_key(noise.rested, k, keys[k]); }
  let tile = wid.y * groups.x + wid.x;
  for (var k = 0u; k < STEPS; k++) {
    // the last sub-step's states are written, and its tile sum read, before this one's
    workgroupBarrier();
    var work = vec4<f32>(0.0);
    for (var r = 0u; r < ROWS; r++) {
      let ty = local.y + r * (STEP_H / ROWS);
      let x = x0 + local.x;
      let y = y0 + ty;
      if (x < P.n && y < P.n) {
        work += advance(k, (ty + STEPS) * REGION_W + local.x + STEPS, x, y, base, noise, keys[k]);
      }
    }
    // the ring round the tile that the later sub-steps read. Its ledger terms are summed too, though
    // never kept: a compiler that fuses a multiply into an add where the product has no other use
    // (NVIDIA's may) would otherwise round the ring's noise term otherwise than the tile's cells'.
    var ring = vec4<f32>(0.0);
    let reach = STEPS - 1u - k;
    let w = STEP_W + 2u * reach;
    let h = STEP_H + 2u * reach;
    for (var m = lanes.lid; m < w * h; m += INVOCATIONS) {
      let ox = m % w;
      let oy = m / w;
      let own = ox >= reach && ox < reach + STEP_W && oy >= reach && oy < reach + STEP_H;
      let x = rx + i32(STEPS - reach + ox);
      let y = ry + i32(STEPS - reach + oy);
      if (!own && inside(x, y)) {
        ring += advance(k, (STEPS - reach + oy) * REGION_W + STEPS - reach + ox, u32(x), u32(y), base, noise, keys[k]);
      }
    }
    // never true (these dispatches sample nothing: the host sets energy_at 0), but not known to the compiler
    if (P.energy_at == 0xffffffffu) { tile_sums[lanes.lid] = ring.x + ring.y + ring.z + ring.w; }
    let total = tile_total(lanes, work);
    if (lanes.lid == 0u) {
      let at = 4u * (((P.ledger_slot + k) * P.fields + field) * P.tiles_per_field + tile);
      tile_sums[at] = total.x;
      tile_sums[at + 1u] = total.y;
      tile_sums[at + 2u] = total.z;
      tile_sums[at + 3u] = total.w;
    }
  }
  // each invocation wrote its own cells of the last two states itself
  for (var r = 0u; r < ROWS; r++) {
    let ty = local.y + r * (STEP_H / ROWS);
    let x = x0 + local.x;
    let y = y0 + ty;
    if (x < P.n && y < P.n) {
      let j = (ty + STEPS) * REGION_W + local.x + STEPS;
      u_next[base + y * P.n + x] = states[STEPS % 3u][j];
      u_after[base + y * P.n + x] = states[(STEPS + 1u) % 3u][j];
    }
  }
}
