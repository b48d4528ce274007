// The perturbation's erasure decided where the fields live from each part's integer sums
// (docs/detection.md, item 6): u and u_prev zeroed at the cells of the disc round the part's centroid
// that lie on the negative side of its principal axis, decided in integers as the host's erasePlan
// decides them (engine/detect/erase_plan.ts, the CPU twin), so that the device needs no list of cells:
// with c its cells, dX = c x - Sx and dY = c y - Sy, a cell is within reach where
// (dX^2 + dY^2) ONE^2 <= (2 radii + c ONE)^2, and its side is dX's where B = 0 <= A, dY's where
// B = 0 > A, else side_of's (shaders/integers.wgsl, as `regions` sides a halved part's cells).
// One invocation a cell of a plan's field (a 2D grid past 65,535 workgroups), dispatch z the z-th plan;
// a cell f32 puts well outside the disc is left at once. `struct Erase` and ERASE_WORDS are generated
// (engine/gpu/inject.ts); a plan is ERASE_WORDS words: its field, c, then Sx, Sy, Sxx, Syy, Sxy and
// the radii, two words each (low first). Test: engine/gpu/kick.test.ts.

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

@compute @workgroup_size(256)
fn erase_planned(@builtin(global_invocation_id) gid: vec3<u32>) {
  let cell = gid.y * 65535u * 256u + gid.x;
  if (cell >= E.cells) { return; }
  let at = gid.z * ERASE_WORDS;
  let c = plans[at + 1u];
  let sx = plan_wide(at + 2u);
  let sy = plan_wide(at + 4u);
  let dX = wide_add(wide_mul(c, cell % E.n), wide_neg(sx));
  let dY = wide_add(wide_mul(c, cell / E.n), wide_neg(sy));
  // 2 radii + c ONE
  let t = wide_add(wide_times(plan_wide(at + 12u), 2u), wide_mul(c, ONE));
  if (!within_reach(dX, dY, t)) { return; }
  // c times the second moments about the centroid: A = Mxx - Myy, B = Mxy (as `regions` takes them)
  let cw = vec2<u32>(c, 0u);
  let mxx = big_add(big_times(big_of(plan_wide(at + 6u)), cw), big_neg(big_times(big_of(sx), sx)));
  let myy = big_add(big_times(big_of(plan_wide(at + 8u)), cw), big_neg(big_times(big_of(sy), sy)));
  let a = big_add(mxx, big_neg(myy));
  let b = big_add(big_times(big_of(plan_wide(at + 10u)), cw), big_neg(big_times(big_of(sx), sy)));
  var side = 0;
  if (big_sign(b) != 0) {
    side = side_of(dX, dY, axis_of(a, b));
  } else if (big_sign(a) >= 0) {
    side = wide_sign(dX);
  } else {
    side = wide_sign(dY);
  }
  if (side >= 0) { return; }
  let i = plans[at] * E.cells + cell;
  cur[i] = 0.0;
  prev[i] = 0.0;
}
