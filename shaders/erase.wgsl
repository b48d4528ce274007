// The perturbation planned from each part's integer sums where the fields live (docs/detection.md,
// item 6): the disc round the part's centroid, decided in integers as the host's erasePlan decides it
// (engine/detect/erase_plan.ts), so that the device needs no list of cells: with c its cells,
// dX = c x - Sx and dY = c y - Sy, a cell is within reach where (dX^2 + dY^2) ONE^2 <= (2 radii +
// c ONE)^2, and its side is dX's where B = 0 <= A, dY's where B = 0 > A, else side_of's
// (shaders/integers.wgsl, as `regions` sides a halved part's cells). A cell f32 puts well outside
// the disc is left without the exact test.
// - `erase_planned`: u and u_prev zeroed at the disc's cells on the negative side of the principal
//   axis; one invocation a cell of a plan's field (a 2D grid past 65,535 workgroups), dispatch z the
//   z-th plan. CPU twin: erasePlan's `erased` (WasmFieldBackend.erase); test: engine/gpu/kick.test.ts.
// - `regrowth`: one workgroup a plan, the three centred sums of the stability sums held before the
//   erasure and those now over the disc (before x after, before^2, after^2), as basin.wgsl makes its
//   five: 256 lanes each sum every 256th cell of the disc, halved in a tree, the means first (over the
//   disc's cells, counted here), then the products. CPU twin: regrowthSums (engine/detect/regrowth.ts)
//   over erasePlan's `window`; test: engine/gpu/basin.test.ts.
// `struct Erase` and ERASE_WORDS are generated (engine/gpu/erase.ts), `lanes` and `halve` prepended (shaders/lanes.wgsl); a plan is ERASE_WORDS words: its
// field, c, then Sx, Sy, Sxx, Syy, Sxy and the radii, two words each (low first).

const ONE: u32 = 1u << OFFSET_BITS;
// how far past the disc's edge f32's (dX^2 + dY^2) ONE^2 must be for a cell to be left without the
// exact test: its terms are a few ulps (2^-23) from the exact ones, so 2^-10 is far outside
const DISC_MARGIN: f32 = 1.0009765625;

@group(0) @binding(0) var<uniform> E: Erase;
@group(0) @binding(1) var<storage, read> plans: array<u32>;
@group(0) @binding(2) var<storage, read_write> cur: array<f32>;
@group(0) @binding(3) var<storage, read_write> prev: array<f32>;

fn plan_wide(at: u32) -> vec2<u32> {
  return vec2<u32>(plans[at], plans[at + 1u]);
}

/** (dX^2 + dY^2) ONE^2 <= t^2, exactly (|dX|, |dY| under 2^37 and t under 2^52 at N = 4096). */
fn within_reach(dX: vec2<u32>, dY: vec2<u32>, t: vec2<u32>) -> bool {
  let x = wide_f32(dX);
  let y = wide_f32(dY);
  let r = wide_f32(t) / f32(ONE);
  if (x * x + y * y > DISC_MARGIN * r * r) { return false; }
  let ax = wide_abs(dX);
  let ay = wide_abs(dY);
  let squares = big_add(big_times(big_of(ax), ax), big_times(big_of(ay), ay));
  return big_compare(big_times(squares, vec2<u32>(ONE * ONE, 0u)), big_times(big_of(t), t)) <= 0;
}

/** Whether `cell` is within reach of plan `at`'s centroid, and (dX, dY) there. */
struct Reach {
  within: bool,
  dX: vec2<u32>,
  dY: vec2<u32>,
}

fn reach_of(at: u32, cell: u32) -> Reach {
  let c = plans[at + 1u];
  let dX = wide_add(wide_mul(c, cell % E.n), wide_neg(plan_wide(at + 2u)));
  let dY = wide_add(wide_mul(c, cell / E.n), wide_neg(plan_wide(at + 4u)));
  // 2 radii + c ONE
  let t = wide_add(wide_times(plan_wide(at + 12u), 2u), wide_mul(c, ONE));
  return Reach(within_reach(dX, dY, t), dX, dY);
}

@compute @workgroup_size(256)
fn erase_planned(@builtin(global_invocation_id) gid: vec3<u32>) {
  let cell = gid.y * 65535u * 256u + gid.x;
  if (cell >= E.cells) { return; }
  let at = gid.z * ERASE_WORDS;
  let r = reach_of(at, cell);
  if (!r.within) { return; }
  // c times the second moments about the centroid: A = Mxx - Myy, B = Mxy (as `regions` takes them)
  let cw = vec2<u32>(plans[at + 1u], 0u);
  let sx = plan_wide(at + 2u);
  let sy = plan_wide(at + 4u);
  let mxx = big_add(big_times(big_of(plan_wide(at + 6u)), cw), big_neg(big_times(big_of(sx), sx)));
  let myy = big_add(big_times(big_of(plan_wide(at + 8u)), cw), big_neg(big_times(big_of(sy), sy)));
  let a = big_add(mxx, big_neg(myy));
  let b = big_add(big_times(big_of(plan_wide(at + 10u)), cw), big_neg(big_times(big_of(sx), sy)));
  var side = 0;
  if (big_sign(b) != 0) {
    side = side_of(r.dX, r.dY, axis_of(a, b));
  } else if (big_sign(a) >= 0) {
    side = wide_sign(r.dX);
  } else {
    side = wide_sign(r.dY);
  }
  if (side >= 0) { return; }
  let i = plans[at] * E.cells + cell;
  cur[i] = 0.0;
  prev[i] = 0.0;
}

// `regrowth`'s own bindings: [field][cell] the sums held before the erasure, and now; three sums a plan
@group(0) @binding(4) var<storage, read> before: array<f32>;
@group(0) @binding(5) var<storage, read> after: array<f32>;
@group(0) @binding(6) var<storage, read_write> regrowths: array<f32>;

var<workgroup> disc_cells: atomic<u32>;

@compute @workgroup_size(256)
fn regrowth(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let at = wg.x * ERASE_WORDS;
  let base = plans[at] * E.cells;
  var b = 0.0;
  var a = 0.0;
  var count = 0u;
  for (var cell = i; cell < E.cells; cell += 256u) {
    if (reach_of(at, cell).within) {
      b = b + before[base + cell];
      a = a + after[base + cell];
      count++;
    }
  }
  atomicAdd(&disc_cells, count);
  lanes[0][i] = b;
  lanes[1][i] = a;
  halve(i, 2u);
  let inverse = 1.0 / f32(atomicLoad(&disc_cells));
  let mb = lanes[0][0] * inverse;
  let ma = lanes[1][0] * inverse;
  // every lane has its means before the lanes take the products
  workgroupBarrier();
  var s = array<f32, 3>(0.0, 0.0, 0.0);
  for (var cell = i; cell < E.cells; cell += 256u) {
    if (reach_of(at, cell).within) {
      let x = before[base + cell] - mb;
      let y = after[base + cell] - ma;
      s[0] = s[0] + x * y;
      s[1] = s[1] + x * x;
      s[2] = s[2] + y * y;
    }
  }
  for (var q = 0u; q < 3u; q++) { lanes[q][i] = s[q]; }
  halve(i, 3u);
  if (i < 3u) { regrowths[wg.x * 3u + i] = lanes[i][0]; }
}
