// A stability map's components and their masses, made where the maps live (docs/detection.md, "What
// one read a generation would take", items 1 to 3): the first bricks of detection on the device.
// Every value here but the first parts' power sums is an integer, a correctly rounded f32 product, or
// decided exactly (a sign f32 cannot tell is taken in integers), so any adapter gives the CPU twin's
// numbers bit for bit, whatever order its invocations run in; the power sums (`first_sums`) are
// power_sums.wgsl's float32 operations in its order, so the same bits on SwiftShader and to an ulp an
// operation where a driver fuses a multiply-add. So where two bins' sums are that near, the mode's bin
// `first_modes` takes from them (and so the planes it takes) may differ from the host's, as
// mode_planes.wgsl's may.
// - `peak`: one workgroup a field, the map's largest value (a max is exact), or NO_PEAK where a cell
//   is NaN or infinite (found by their bits: an implementation may assume neither); such a map is
//   left to the host (engine/gpu/components.ts listOf), as is one whose peak is under 2^-102, where
//   the threshold or a cell could be subnormal and flushed to zero;
// - `mask`: each cell's label its own index where map >= f32(0.45) x peak (the float32 rule of
//   structureMask), NONE elsewhere, and its tally zeroed;
// - `link`: each masked cell joined to its left and upper masked neighbours (a lock-free union-find:
//   a root only ever points to a smaller cell, by atomicMin, retried where another union moved it;
//   Playne and Hawick 2018), so each component's root is its smallest cell, whatever the order;
// - `flatten`: each label replaced by its root (the CPU twin: labels(structureMask(map), n));
// - `tally`: each component's cells and stability mass added at its root, the mass as a 64-bit
//   fixed-point integer (two u32 words, the carry added to the high one): a masked cell is at least
//   0.45 of the peak, so its f32 value is a whole number of units of 2^(e - 25) (e the peak's binade)
//   below 2^26, made from its bits (no float operation), and the sum of a field's cells is exact in
//   any order, as the host's float64 massOf is;
// - `list`: each component of MIN_AREA cells or more listed in its field's list (root, cells, mass low,
//   mass high), in the order the roots came (the host ranks them by mass, then root): what comes back.
// Then, where C.shapes is set, the field's total and each listed component's shape as integers
// (docs/detection.md, item 2's exact forms; the CPU twins: fieldTotal and shapeSums in
// engine/detect/detect.ts), at the start of the field's shapes and at the component's slot there:
// - `mask` also adds each cell to the total, floored to 2^(e - 25 - TOTAL_BITS) (e the peak's binade),
//   a workgroup's cells first, then the workgroup's sum (`peak` zeroes the total);
// - `list` also marks the root's tally with SLOT | its slot and zeroes the slot's sums;
// - `moments`: each cell's x, y, x^2, y^2 and x y added at its component's slot, and its least and
//   greatest column and row taken (atomicMin, atomicMax);
// - `centre` (the roots): the centroid in fixed point, floor((2 X 2^F + c) / (2 c)), F = OFFSET_BITS;
// - `radii`: each cell's floored distance from it, isqrt(dx^2 + dy^2), added;
// - `bounds` (the roots): half the mean radius as bounds on a squared distance;
// - `sectors`: the sectors reached by cells at least that far out (atomicOr), and the cells within it.
// And where C.later is set too, a later window's sums (`later_sums`, raw: no scale) over each listed
// component, for its sustain (the CPU twin: sustainOf's laterUnitsOf):
// - `peak` also takes their peak (NO_PEAK where one is NaN or infinite), at word 2 of the field's shapes;
// - `moments` also adds each cell's later sum floored to fieldTotal's unit of those sums at its slot,
//   and persistence's sums (persistenceSums): with a the cell in the map's units 2^(e - 25) (tally's)
//   and b its later sum floored to 2^(eL - 25), a b, a^2 and b^2, products under 2^52 summed in three
//   words.
// - `rank` (a workgroup a field, after the rest): each listed component's rank as detection ranks them
//   (the most mass, then the most cells, then the smallest root: the host's listOf), and the first
//   TOP of them copied in that order, each its list entry and its slot, after the field's total and
//   later peak, where a read can take them alone (item 3's first K parts by mass).
// Sums and squares pass 2^32 (x^2 summed over 2^24 cells at N = 4096; D < 2^51), so they are 64-bit
// integers of two u32 words (wide_*, shaders/integers.wgsl, prepended).
// `struct Components`, `struct Planes`, MIN_AREA, LISTED (entries a list holds), OFFSET_BITS, SHAPE_WORDS, TOTAL_BITS, TOP, PLACE_WORDS, SAMPLED and MODAL_BLOCKS are
// generated (engine/gpu/components.ts COMPONENTS_HEADER). `out` is [lists: fields x (length, LISTED x 4 words)] [peaks: fields]
// [labels: fields x cells] [tally: fields x cells x (cells, mass low, mass high)] and, where C.shapes is
// set, [shapes: fields x (total low, total high, later peak, LISTED x SHAPE_WORDS)] [top: fields x
// (total low, total high, later peak, TOP x (4 + SHAPE_WORDS))] and, where `places` runs, [places: fields x TOP x
// PLACE_WORDS] [lists: fields x TOP x LIST_PART_WORDS] [regions: fields x TOP x REGION_WORDS]; a list's length counts every
// component listed, those past LISTED left out.

const NONE: u32 = 0xffffffffu;
const NO_PEAK: u32 = 0xffffffffu;
// fround(0.45) by its bits: how an abstract float literal rounds to f32 is not pinned
const THRESHOLD_OF_PEAK: f32 = bitcast<f32>(0x3ee66666u);

@group(0) @binding(0) var<uniform> C: Components;
@group(0) @binding(1) var<storage, read> maps: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<atomic<u32>>;
// the maps again where no later window is asked for (C.later 0): nothing reads it then
@group(0) @binding(3) var<storage, read> later_sums: array<f32>;

var<workgroup> lanes: array<f32, 256>;
// a NaN or an infinity seen in the map (0) or the later sums (1): peak_of
var<workgroup> nan_seen: array<atomic<u32>, 2>;
// a workgroup's cells' part of the field's total (mask), low and high words
var<workgroup> total_low: atomic<u32>;
var<workgroup> total_high: atomic<u32>;

fn value(field: u32, cell: u32) -> f32 {
  return maps[C.base + field * C.stride + cell] * C.scale;
}

fn later_value(field: u32, cell: u32) -> f32 {
  return later_sums[C.later_base + field * C.later_stride + cell];
}

const LIST_WORDS: u32 = 1u + 4u * LISTED;

fn peak_at(field: u32) -> u32 {
  return C.fields * LIST_WORDS + field;
}

fn label_at(field: u32) -> u32 {
  return C.fields * (LIST_WORDS + 1u) + field * C.cells;
}

fn tally_at(field: u32, cell: u32) -> u32 {
  return C.fields * (LIST_WORDS + 1u + C.cells) + 3u * (field * C.cells + cell);
}

fn finite(v: f32) -> bool {
  // by the bits: an implementation may assume no NaN or infinity in its float operations
  return (bitcast<u32>(v) & 0x7fffffffu) < 0x7f800000u;
}

/**
 * The largest value of a field's map (`which` 0) or of its later sums (1), as bits, or NO_PEAK where
 * one is NaN or infinite: a tree in `lanes`, so every invocation of the workgroup calls it.
 */
fn peak_of(i: u32, field: u32, which: u32) -> u32 {
  var m = 0.0;
  for (var c = i; c < C.cells; c += 256u) {
    var v: f32;
    if (which == 0u) { v = value(field, c); } else { v = later_value(field, c); }
    if (!finite(v)) { atomicStore(&nan_seen[which], 1u); } else { m = max(m, v); }
  }
  // `lanes` free from an earlier call
  workgroupBarrier();
  lanes[i] = m;
  workgroupBarrier();
  for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
    if (i < stride) { lanes[i] = max(lanes[i], lanes[i + stride]); }
    workgroupBarrier();
  }
  if (atomicLoad(&nan_seen[which]) != 0u) { return NO_PEAK; }
  return bitcast<u32>(lanes[0]);
}

@compute @workgroup_size(256)
fn peak(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let field = wg.x;
  let top = peak_of(i, field, 0u);
  if (i == 0u) {
    atomicStore(&out[peak_at(field)], top);
    atomicStore(&out[field * LIST_WORDS], 0u);
    if (C.shapes != 0u) {
      atomicStore(&out[shapes_of(field)], 0u);
      atomicStore(&out[shapes_of(field) + 1u], 0u);
      atomicStore(&out[shapes_of(field) + 2u], NO_PEAK);
    }
  }
  // the later sums' peak (C.shapes and C.later are uniform: every invocation comes here or returns)
  if (C.shapes == 0u || C.later == 0u) { return; }
  let later_top = peak_of(i, field, 1u);
  if (i == 0u) { atomicStore(&out[shapes_of(field) + 2u], later_top); }
}

/** The cell of the field's grid this invocation takes (a 2D grid past 65,535 workgroups), or C.cells past the end. */
fn cell_of(gid: vec3<u32>) -> u32 {
  return min(gid.y * 65535u * 256u + gid.x, C.cells);
}

/**
 * A cell of a field whose peak has the bits `top` in units of 2^(e - 23 - lift) (e the peak's binade;
 * fieldTotal's at lift LIFT, persistence's 2^(e - 25) at 2), floored, as (low, high).
 */
fn units_of(top: u32, v: f32, lift: u32) -> vec2<u32> {
  let b = bitcast<u32>(v);
  let binade = b >> 23u;
  // a subnormal cell (an adapter may have flushed it) or one below 0 counts 0
  if (binade == 0u || binade > 0xffu) { return vec2<u32>(0u, 0u); }
  let sig = (b & 0x7fffffu) | 0x800000u;
  let d = (top >> 23u) - binade;
  if (d <= lift) {
    let s = lift - d;
    return vec2<u32>(sig << s, select(0u, sig >> (32u - s), s > 0u));
  }
  if (d < lift + 24u) { return vec2<u32>(sig >> (d - lift), 0u); }
  return vec2<u32>(0u, 0u);
}

@compute @workgroup_size(256)
fn mask(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) i: u32) {
  let c = cell_of(gid);
  let field = gid.z;
  let bits = atomicLoad(&out[peak_at(field)]);
  if (c < C.cells) {
    let top = bitcast<f32>(bits);
    let v = value(field, c);
    var l = NONE;
    if (bits != NO_PEAK && top > 0.0 && v >= THRESHOLD_OF_PEAK * top) { l = c; }
    atomicStore(&out[label_at(field) + c], l);
    let t = tally_at(field, c);
    atomicStore(&out[t], 0u);
    atomicStore(&out[t + 1u], 0u);
    atomicStore(&out[t + 2u], 0u);
    if (C.shapes != 0u && bits != NO_PEAK) {
      let q = units_of(bits, v, LIFT);
      let low = atomicAdd(&total_low, q.x);
      atomicAdd(&total_high, q.y + select(0u, 1u, low + q.x < low));
    }
  }
  if (C.shapes == 0u) { return; }
  // the workgroup's sum (under 2^47) added once to the field's
  workgroupBarrier();
  if (i == 0u) {
    let at = shapes_of(field);
    let part = vec2<u32>(atomicLoad(&total_low), atomicLoad(&total_high));
    let low = atomicAdd(&out[at], part.x);
    atomicAdd(&out[at + 1u], part.y + select(0u, 1u, low + part.x < low));
  }
}

fn root(base: u32, cell: u32) -> u32 {
  var x = cell;
  loop {
    let p = atomicLoad(&out[base + x]);
    if (p == x) { return x; }
    x = p;
  }
}

fn unite(base: u32, first: u32, second: u32) {
  var a = first;
  var b = second;
  loop {
    a = root(base, a);
    b = root(base, b);
    if (a == b) { return; }
    // the larger root pointed at the smaller; where another union moved it meanwhile, `old` is where
    // it points now, and joining that to the other root keeps both unions
    if (a < b) {
      let old = atomicMin(&out[base + b], a);
      if (old == b) { return; }
      b = old;
    } else {
      let old = atomicMin(&out[base + a], b);
      if (old == a) { return; }
      a = old;
    }
  }
}

@compute @workgroup_size(256)
fn link(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let base = label_at(gid.z);
  if (atomicLoad(&out[base + c]) == NONE) { return; }
  if (c % C.n != 0u && atomicLoad(&out[base + c - 1u]) != NONE) { unite(base, c, c - 1u); }
  if (c >= C.n && atomicLoad(&out[base + c - C.n]) != NONE) { unite(base, c, c - C.n); }
}

@compute @workgroup_size(256)
fn flatten(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let base = label_at(gid.z);
  if (atomicLoad(&out[base + c]) == NONE) { return; }
  atomicStore(&out[base + c], root(base, c));
}

@compute @workgroup_size(256)
fn tally(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let field = gid.z;
  let r = atomicLoad(&out[label_at(field) + c]);
  if (r == NONE) { return; }
  // the cell in units of 2^(e - 25), e the peak's binade: its 24-bit significand shifted by 2 less the
  // binades it lies under the peak (0 to 2: a masked cell is over a quarter of the peak)
  let top = (atomicLoad(&out[peak_at(field)]) >> 23u) & 0xffu;
  let bits = bitcast<u32>(value(field, c));
  let q = ((bits & 0x7fffffu) | 0x800000u) << (((bits >> 23u) & 0xffu) + 2u - top);
  let t = tally_at(field, r);
  atomicAdd(&out[t], 1u);
  let low = atomicAdd(&out[t + 1u], q);
  if (low + q < low) { atomicAdd(&out[t + 2u], 1u); }
}

@compute @workgroup_size(256)
fn list(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let field = gid.z;
  if (atomicLoad(&out[label_at(field) + c]) != c) { return; }
  let t = tally_at(field, c);
  let cells = atomicLoad(&out[t]);
  if (cells < MIN_AREA) { return; }
  let at = field * LIST_WORDS;
  let slot = atomicAdd(&out[at], 1u);
  if (slot >= LISTED) { return; }
  let entry = at + 1u + 4u * slot;
  atomicStore(&out[entry], c);
  atomicStore(&out[entry + 1u], cells);
  atomicStore(&out[entry + 2u], atomicLoad(&out[t + 1u]));
  atomicStore(&out[entry + 3u], atomicLoad(&out[t + 2u]));
  if (C.shapes == 0u) { return; }
  // the cells find their slot at their root (its tally is in the entry now)
  atomicStore(&out[t], SLOT | slot);
  let s = shape_at(field, slot);
  for (var w = 0u; w < SHAPE_WORDS; w++) { atomicStore(&out[s + w], 0u); }
  // the extremes start past every cell: the least column and row at NONE
  atomicStore(&out[s + EDGES], NONE);
  atomicStore(&out[s + EDGES + 2u], NONE);
}

// ---- the listed components' shapes ----

const SLOT: u32 = 0x80000000u;
// a slot's words: the sums of x, y, x^2, y^2, x y and the radii (two words each, low first), then the
// centroid (x, y), half the mean radius as bounds (out, within), the sectors reached and the cells within
const SUM_X: u32 = 0u;
const SUM_Y: u32 = 2u;
const SUM_XX: u32 = 4u;
const SUM_YY: u32 = 6u;
const SUM_XY: u32 = 8u;
const RADII: u32 = 10u;
const CENTRE_X: u32 = 12u;
const CENTRE_Y: u32 = 13u;
const OUT: u32 = 14u;
const WITHIN: u32 = 15u;
const REACHED: u32 = 16u;
const INNER: u32 = 17u;
// the later window's sums over it, floored as the total's cells (two words), then persistence's
// sums of a b, a^2 and b^2 (three words each)
const LATER: u32 = 18u;
const AB: u32 = 20u;
const AA: u32 = 23u;
const BB: u32 = 26u;
// its least and greatest column, then its least and greatest row
const EDGES: u32 = 29u;
// persistence's units: 2^(e - 25) of a binade e
const PERSISTENCE_LIFT: u32 = 2u;
const ONE: u32 = 1u << OFFSET_BITS;
// a cell in the peak's binade is its 24-bit significand times 2^LIFT units of the total (fieldTotal's)
const LIFT: u32 = 25u + TOTAL_BITS - 23u;

/** A field's shapes: its total's two words, the later sums' peak, then its slots. */
fn shapes_of(field: u32) -> u32 {
  return C.fields * (LIST_WORDS + 1u + 4u * C.cells) + field * (3u + LISTED * SHAPE_WORDS);
}

fn shape_at(field: u32, slot: u32) -> u32 {
  return shapes_of(field) + 3u + slot * SHAPE_WORDS;
}

/** The shape slot of a masked cell's component, or NONE where it has none (unmasked, under MIN_AREA, past LISTED). */
fn slot_of(field: u32, c: u32) -> u32 {
  let r = atomicLoad(&out[label_at(field) + c]);
  if (r == NONE) { return NONE; }
  let mark = atomicLoad(&out[tally_at(field, r)]);
  if ((mark & SLOT) == 0u) { return NONE; }
  return shape_at(field, mark & ~SLOT);
}

/** a + b where a is two words at `at` (low first), by the carry. */
fn add_wide(at: u32, b: u32) {
  let low = atomicAdd(&out[at], b);
  if (low + b < low) { atomicAdd(&out[at + 1u], 1u); }
}

/** a + b where a is three words at `at` (low first) and b a product under 2^52, by the carries. */
fn add_wide3(at: u32, b: vec2<u32>) {
  let low = atomicAdd(&out[at], b.x);
  // b.y is under 2^20: with the carry it cannot wrap
  let middle = b.y + select(0u, 1u, low + b.x < low);
  let old = atomicAdd(&out[at + 1u], middle);
  if (old + middle < old) { atomicAdd(&out[at + 2u], 1u); }
}

fn wide_at(at: u32) -> vec2<u32> {
  return vec2<u32>(atomicLoad(&out[at]), atomicLoad(&out[at + 1u]));
}

/** A cell's offset from its component's fixed-point centroid (|dx|, |dy| under 2^25 at N = 4096). */
fn offset(c: u32, s: u32) -> vec2<i32> {
  let x = c % C.n;
  let y = c / C.n;
  return vec2<i32>(i32(x * ONE) - i32(atomicLoad(&out[s + CENTRE_X])), i32(y * ONE) - i32(atomicLoad(&out[s + CENTRE_Y])));
}

fn squared(d: vec2<i32>) -> vec2<u32> {
  let a = u32(abs(d.x));
  let b = u32(abs(d.y));
  return wide_add(wide_mul(a, a), wide_mul(b, b));
}

/** sectorOf (engine/detect/detect.ts): which of 16 sectors of atan2's angle from -pi, by integer comparisons. */
fn sector_of(d: vec2<i32>) -> u32 {
  let a = u32(abs(d.x));
  let b = u32(abs(d.y));
  // psi = atan2(|dy|, dx) in [0, pi] as steps of 22.5 degrees: exactly m, or strictly between m and m + 1;
  // b < (sqrt 2 - 1) a is (a + b)^2 < 2 a^2, b > (sqrt 2 + 1) a is (b - a)^2 > 2 a^2
  var m = 0i;
  var exact = true;
  if (a == 0u) {
    m = select(4i, 0i, b == 0u);
  } else if (b == 0u) {
    m = 0i;
  } else if (b == a) {
    m = 2i;
  } else if (b < a) {
    m = select(1i, 0i, wide_less(wide_mul(a + b, a + b), wide_mul(2u * a, a)));
    exact = false;
  } else {
    m = select(3i, 2i, wide_less(wide_mul(b - a, b - a), wide_mul(2u * a, a)));
    exact = false;
  }
  // the left half mirrors the right: psi = pi - psi'
  if (d.x < 0i) { m = select(7i - m, 8i - m, exact); }
  // floor(theta / 22.5 degrees), theta = psi above the axis and -psi below it
  var k = m;
  if (d.y < 0i) { k = select(-(m + 1i), -m, exact); }
  return u32((k + 24i) % 16i);
}

@compute @workgroup_size(256)
fn moments(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let s = slot_of(gid.z, c);
  if (s == NONE) { return; }
  let x = c % C.n;
  let y = c / C.n;
  add_wide(s + SUM_X, x);
  add_wide(s + SUM_Y, y);
  add_wide(s + SUM_XX, x * x);
  add_wide(s + SUM_YY, y * y);
  add_wide(s + SUM_XY, x * y);
  atomicMin(&out[s + EDGES], x);
  atomicMax(&out[s + EDGES + 1u], x);
  atomicMin(&out[s + EDGES + 2u], y);
  atomicMax(&out[s + EDGES + 3u], y);
  if (C.later == 0u) { return; }
  // no unit (unitOfPeak 0): sums with a NaN or an infinity, or whose peak is 0 or subnormal, add nothing
  let top = atomicLoad(&out[shapes_of(gid.z) + 2u]);
  if (top == NO_PEAK || (top >> 23u) == 0u) { return; }
  let v = later_value(gid.z, c);
  let q = units_of(top, v, LIFT);
  let low = atomicAdd(&out[s + LATER], q.x);
  atomicAdd(&out[s + LATER + 1u], q.y + select(0u, 1u, low + q.x < low));
  // a: the cell in the map's units, as tally takes it (whole, under 2^26: a masked cell); b: under 2^26
  let map_top = (atomicLoad(&out[peak_at(gid.z)]) >> 23u) & 0xffu;
  let bits = bitcast<u32>(value(gid.z, c));
  let a = ((bits & 0x7fffffu) | 0x800000u) << (((bits >> 23u) & 0xffu) + 2u - map_top);
  let b = units_of(top, v, PERSISTENCE_LIFT).x;
  add_wide3(s + AB, wide_mul(a, b));
  add_wide3(s + AA, wide_mul(a, a));
  add_wide3(s + BB, wide_mul(b, b));
}

/** The listed slot whose root c is, or NONE. */
fn root_slot(field: u32, c: u32) -> u32 {
  if (atomicLoad(&out[label_at(field) + c]) != c) { return NONE; }
  return slot_of(field, c);
}

/** A root's cell count, from its list entry (the tally's first word is its slot now). */
fn count_of(field: u32, c: u32) -> u32 {
  let slot = atomicLoad(&out[tally_at(field, c)]) & ~SLOT;
  return atomicLoad(&out[field * LIST_WORDS + 2u + 4u * slot]);
}

@compute @workgroup_size(256)
fn centre(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let s = root_slot(gid.z, c);
  if (s == NONE) { return; }
  let count = count_of(gid.z, c);
  // 2 X 2^F + c, X a sum of two words
  for (var axis = 0u; axis < 2u; axis++) {
    let sum = wide_at(s + select(SUM_X, SUM_Y, axis == 1u));
    let twice = vec2<u32>(sum.x << (OFFSET_BITS + 1u), (sum.y << (OFFSET_BITS + 1u)) | (sum.x >> (31u - OFFSET_BITS)));
    atomicStore(&out[s + CENTRE_X + axis], wide_div(wide_add(twice, vec2<u32>(count, 0u)), 2u * count).x);
  }
}

@compute @workgroup_size(256)
fn radii(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let s = slot_of(gid.z, c);
  if (s == NONE) { return; }
  add_wide(s + RADII, wide_sqrt(squared(offset(c, s))));
}

@compute @workgroup_size(256)
fn bounds(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let s = root_slot(gid.z, c);
  if (s == NONE) { return; }
  // 2 c r >= sum r is r >= ceil(sum r / 2c); 2 c r <= sum r is r <= floor(sum r / 2c)
  let q = wide_div(wide_at(s + RADII), 2u * count_of(gid.z, c));
  atomicStore(&out[s + OUT], q.x + select(0u, 1u, q.y != 0u));
  atomicStore(&out[s + WITHIN], q.x);
}

@compute @workgroup_size(256)
fn sectors(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let s = slot_of(gid.z, c);
  if (s == NONE) { return; }
  let d = offset(c, s);
  let dd = squared(d);
  let out_bound = atomicLoad(&out[s + OUT]);
  if (!wide_less(dd, wide_mul(out_bound, out_bound))) { atomicOr(&out[s + REACHED], 1u << sector_of(d)); }
  let within = atomicLoad(&out[s + WITHIN]) + 1u;
  if (wide_less(dd, wide_mul(within, within))) { atomicAdd(&out[s + INNER], 1u); }
}

/**
 * A field's total and later peak (3 words), then its first TOP components by rank: each its list entry
 * (4 words) and its slot's words; then its candidates (CANDIDATE_HEAD words, then CANDIDATES entries).
 */
fn top_of(field: u32) -> u32 {
  return C.fields * (LIST_WORDS + 1u + 4u * C.cells + 3u + LISTED * SHAPE_WORDS) + field * (3u + TOP * (4u + SHAPE_WORDS) + CANDIDATE_HEAD + CANDIDATES * CANDIDATE_WORDS);
}

// ---- the candidates (`rank`'s last part; the CPU twin: engine/detect/candidates.ts candidateTable) ----
// The parts a field's perturbation may act on, over every listed part in rank order (docs/detection.md
// item 6): each that holds (sustain >= 0.6, contrast >= 1.5), up to the first that its shape alone
// classes (field-wide or compact). The host judges `holds` in float64, so here each rule is decided
// exactly in integers against its bound moved by 2^-20 either way: a part that holds by the bound
// lowered is a candidate (MAYBE), and one that holds by the bound raised ends the list where its shape
// decides (ENDS). The host's rounding is some 2^-52 of the values, so whatever it decides, the part it
// takes is among them. Past 2^53 (a value the host rounds) a part is a candidate that ends nothing.
const MAYBE: u32 = 1u;
const ENDS: u32 = 2u;
// a field's candidates: how many, 1 where they are complete (detection's first structure, where it finds
// one, is among them); then each its root, cells and its slot's sums of x, y, x^2, y^2, x y and the radii
const CANDIDATE_HEAD: u32 = 2u;
const CANDIDATE_WORDS: u32 = 14u;
// 2^53 as a wide's high word: past it a float64 rounds
const EXACT_HIGH: u32 = 1u << 21u;
// 2^20: the rules' bounds are moved by 1 / MARGIN either way
const MARGIN: u32 = 1u << 20u;

// each listed entry at its rank, and how it holds (MAYBE, ENDS)
var<workgroup> by_rank: array<u32, LISTED>;
var<workgroup> holding: array<u32, LISTED>;

fn candidates_of(field: u32) -> u32 {
  return top_of(field) + 3u + TOP * (4u + SHAPE_WORDS);
}

/** a 2^s, magnitudes (bits shifted past BIG words are lost). */
fn big_shl(a: Big, s: u32) -> Big {
  var x = a;
  var y: Big;
  let words = s / 32u;
  let bits = s % 32u;
  for (var j = words; j < BIG; j++) {
    let source = j - words;
    y[j] = x[source] << bits;
    if (bits != 0u && source > 0u) { y[j] = y[j] | (x[source - 1u] >> (32u - bits)); }
  }
  return y;
}

/**
 * Whether the sustain (sustainFrom: lu 2^k units of the mass's over `taken` samples and the mass m) is at
 * least 0.6 (1 + side 2^-20): 5 MARGIN lu 2^k >= 3 (MARGIN + side) taken m, of lu, m under 2^53 and over
 * 0. Beyond the k clamped to, the answer is the same: 5 MARGIN lu 2^k passes 2^108 > the right side at
 * k = 86, and is under 2^21 < it at k = -55.
 */
fn sustains(lu: vec2<u32>, k: i32, taken: u32, m: vec2<u32>, side: i32) -> bool {
  let shift = clamp(k, -60, 90);
  var left = big_times(big_of(lu), vec2<u32>(5u * MARGIN, 0u));
  var right = big_times(big_times(big_of(m), vec2<u32>(taken, 0u)), vec2<u32>(3u * u32(i32(MARGIN) + side), 0u));
  if (shift > 0) { left = big_shl(left, u32(shift)); } else { right = big_shl(right, u32(-shift)); }
  return big_compare(left, right) >= 0;
}

/**
 * Whether the contrast (stabilityRatio: the mean inside, mass s over `cells`, over the mean outside,
 * total t less s over d cells) is at least 1.5 (1 + side 2^-20), t and s in the total's units, t under
 * 2^53: none where nothing lies outside (the host's ratio is 1 then), else 2 MARGIN s d >= 3 (MARGIN +
 * side) cells (t - s).
 */
fn contrasts(t: vec2<u32>, s: Big, cells: u32, d: u32, side: i32) -> bool {
  let total = big_of(t);
  if (big_compare(total, s) <= 0) { return false; }
  let left = big_shl(big_times(s, vec2<u32>(d, 0u)), 21u);
  let right = big_times(big_times(big_add(total, big_neg(s)), vec2<u32>(cells, 0u)), vec2<u32>(3u * u32(i32(MARGIN) + side), 0u));
  return big_compare(left, right) >= 0;
}

/** How listed entry `slot` of `cells` and mass m (in the map's units 2^(e - 25)) holds: MAYBE, ENDS, both or neither. */
fn hold_of(field: u32, slot: u32, cells: u32, m: vec2<u32>) -> u32 {
  let later_peak = atomicLoad(&out[shapes_of(field) + 2u]);
  let later_binade = later_peak >> 23u;
  // no later window, or its sums' unit is 0 (unitOfPeak): the sustain is 0
  if (C.later == 0u || later_binade == 0u || later_peak >= 0x7f800000u) { return 0u; }
  let lu = wide_at(shape_at(field, slot) + LATER);
  if ((lu.x == 0u && lu.y == 0u) || (m.x == 0u && m.y == 0u)) { return 0u; }
  let t = wide_at(shapes_of(field));
  // the later sums' unit over the mass's: 2^(eL - 25 - TOTAL_BITS) over 2^(e - 25)
  let k = i32(later_binade) - i32(atomicLoad(&out[peak_at(field)]) >> 23u) - i32(TOTAL_BITS);
  let taken = max(C.taken, 1u);
  let d = max(1u, C.cells - cells);
  let s = big_shl(big_of(m), TOTAL_BITS);
  let rounded_sustain = lu.y >= EXACT_HIGH || m.y >= EXACT_HIGH;
  let rounded_contrast = t.y >= EXACT_HIGH;
  let maybe = (rounded_sustain || sustains(lu, k, taken, m, -1)) && (rounded_contrast || contrasts(t, s, cells, d, -1));
  let sure = !rounded_sustain && !rounded_contrast && sustains(lu, k, taken, m, 1) && contrasts(t, s, cells, d, 1);
  // field-wide (area >= 0.2) or compact (under 0.01): exact in integers, as the host's float64 area compares
  let shaped = 5u * cells >= C.cells || 100u * cells < C.cells;
  return select(0u, MAYBE, maybe) | select(0u, ENDS, sure && shaped);
}

@compute @workgroup_size(256)
fn rank(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let field = wg.x;
  let at = field * LIST_WORDS;
  let listed = atomicLoad(&out[at]);
  let count = min(listed, LISTED);
  if (i < 3u) { atomicStore(&out[top_of(field) + i], atomicLoad(&out[shapes_of(field) + i])); }
  // a list of LISTED entries at most, a workgroup of 256 invocations: one an entry
  if (i < count) {
    let entry = at + 1u + 4u * i;
    let root = atomicLoad(&out[entry]);
    let cells = atomicLoad(&out[entry + 1u]);
    let mass = vec2<u32>(atomicLoad(&out[entry + 2u]), atomicLoad(&out[entry + 3u]));
    var r = 0u;
    for (var j = 0u; j < count; j++) {
      let other = at + 1u + 4u * j;
      let m = vec2<u32>(atomicLoad(&out[other + 2u]), atomicLoad(&out[other + 3u]));
      let c = atomicLoad(&out[other + 1u]);
      let same_mass = m.x == mass.x && m.y == mass.y;
      // j goes first: more mass, or as much and more cells, or as much of both and a smaller root
      if (wide_less(mass, m) || (same_mass && (c > cells || (c == cells && atomicLoad(&out[other]) < root)))) { r++; }
    }
    by_rank[r] = i;
    holding[r] = hold_of(field, i, cells, mass);
    if (r < TOP) {
      let to = top_of(field) + 3u + r * (4u + SHAPE_WORDS);
      for (var w = 0u; w < 4u; w++) { atomicStore(&out[to + w], atomicLoad(&out[entry + w])); }
      let s = shape_at(field, i);
      for (var w = 0u; w < SHAPE_WORDS; w++) { atomicStore(&out[to + 4u + w], atomicLoad(&out[s + w])); }
    }
  }
  workgroupBarrier();
  if (i != 0u) { return; }
  // the candidates, in rank order: none where the list runs past LISTED (the host labels such a map)
  let table = candidates_of(field);
  var taken = 0u;
  var complete = select(1u, 0u, listed > LISTED || C.later == 0u);
  for (var r = 0u; r < count && complete == 1u; r++) {
    let h = holding[r];
    if ((h & MAYBE) == 0u) { continue; }
    if (taken == CANDIDATES) {
      complete = 0u;
      break;
    }
    let entry = at + 1u + 4u * by_rank[r];
    let to = table + CANDIDATE_HEAD + taken * CANDIDATE_WORDS;
    atomicStore(&out[to], atomicLoad(&out[entry]));
    atomicStore(&out[to + 1u], atomicLoad(&out[entry + 1u]));
    let s = shape_at(field, by_rank[r]);
    for (var w = 0u; w < CANDIDATE_WORDS - 2u; w++) { atomicStore(&out[to + 2u + w], atomicLoad(&out[s + SUM_X + w])); }
    taken++;
    if ((h & ENDS) != 0u) { break; }
  }
  atomicStore(&out[table], taken);
  atomicStore(&out[table + 1u], complete);
}

// ---- where the first parts' reads fall (`places`, where asked; the CPU twin: engine/detect/placement.ts) ----
// Each of a field's first TOP parts by rank, from its slot's sums alone: PLACE_WORDS words, at BOX the box
// its mode is taken over (x0, x1, y0, y1: reachBox), at HALF_SIDE c times its signature's window's half
// side (two words: signatureWindow), at ROUNDED that window's centre rounded (x, y: modalSamples), at
// BLOCKS per block of a side its samples' count and 8 offsets from that centre (blockOffsets, an i32
// each), at CIRCLE the winding circles' 32 cells at the radius and 32 at 0.7 of it (circleCells), NONE
// outside the field.
const BOX: u32 = 0u;
const HALF_SIDE: u32 = 4u;
const ROUNDED: u32 = 6u;
const BLOCKS: u32 = 8u;
const CIRCLE: u32 = 44u;
// cos(j pi / 16) for j = 0 to 8, to 2^-30 (placement.ts COS_16THS); private, so a runtime index may read it
var<private> COS_16THS: array<u32, 9> = array<u32, 9>(1073741824u, 1053110176u, 992008094u, 892783698u, 759250125u, 596538995u, 410903207u, 209476638u, 0u);

fn places_of(field: u32) -> u32 {
  return top_of(C.fields) + field * TOP * PLACE_WORDS;
}

/** cos(2 pi j / 32) to 2^-30, any j (cosOf). */
fn cos_of(j: i32) -> i32 {
  let k = ((j % 32) + 32) % 32;
  let m = select(32 - k, k, k <= 16);
  if (m <= 8) { return i32(COS_16THS[m]); }
  return -i32(COS_16THS[16 - m]);
}

/**
 * round(s / c + (t / 10) (rc / (c ONE)) (cs 2^-30)), halves up (placement.ts roundedAlong), as
 * floor((20 s + 10 c + floor(2 t rc cs / 2^43)) / (20 c)): the same floor as over the one denominator
 * 20 c 2^43, with 2 t rc |cs| (under 2^85) in three words.
 */
fn rounded_along(s: vec2<u32>, c: u32, rc: vec2<u32>, t: u32, cs: i32) -> i32 {
  let k = wide_mul(2u * t, u32(abs(cs)));
  let ll = wide_mul(rc.x, k.x);
  let lh = wide_mul(rc.x, k.y);
  let hl = wide_mul(rc.y, k.x);
  let w1 = ll.y + lh.x;
  let w1b = w1 + hl.x;
  let w2 = lh.y + hl.y + rc.y * k.y + select(0u, 1u, w1 < ll.y) + select(0u, 1u, w1b < w1);
  // 2^43 is bit 11 of the middle word
  let q = vec2<u32>((w1b >> 11u) | (w2 << 21u), w2 >> 11u);
  let rest = ll.x != 0u || (w1b & 0x7ffu) != 0u;
  var e = q;
  if (cs < 0) { e = wide_neg(wide_add(q, vec2<u32>(select(0u, 1u, rest), 0u))); }
  return floor_div(wide_add(wide_add(wide_times(s, 20u), vec2<u32>(10u * c, 0u)), e), 20u * c);
}

/** max(|e c - s| + c) over an edge e (a column or row) and a first moment s: a side's share of c times the half side. */
fn reach_of(e: u32, c: u32, s: vec2<u32>) -> vec2<u32> {
  var d = wide_add(wide_mul(e, c), wide_neg(s));
  if (wide_negative(d)) { d = wide_neg(d); }
  return wide_add(d, vec2<u32>(c, 0u));
}

@compute @workgroup_size(256)
fn places(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let field = wg.x;
  let r = i / 64u;
  let lane = i % 64u;
  if (r >= min(atomicLoad(&out[field * LIST_WORDS]), TOP)) { return; }
  let part = top_of(field) + 3u + r * (4u + SHAPE_WORDS);
  let c = atomicLoad(&out[part + 1u]);
  let s = part + 4u;
  let sx = wide_at(s + SUM_X);
  let sy = wide_at(s + SUM_Y);
  let rc = wide_max(wide_mul(c, ONE), wide_at(s + RADII));
  let at = places_of(field) + r * PLACE_WORDS;
  // a lane a circle's point: 32 at the radius, 32 at 0.7 of it, counterclockwise from +x
  let j = i32(lane % 32u);
  let t = select(10u, 7u, lane >= 32u);
  let x = rounded_along(sx, c, rc, t, cos_of(j));
  let y = rounded_along(sy, c, rc, t, cos_of(j - 8));
  var cell = NONE;
  if (x >= 0 && y >= 0 && x < i32(C.n) && y < i32(C.n)) { cell = u32(y) * C.n + u32(x); }
  atomicStore(&out[at + CIRCLE + lane], cell);
  if (lane >= 4u) { return; }
  // the signature's window: c times its half side, from the edges
  var hc = vec2<u32>(c, 0u);
  hc = wide_max(hc, reach_of(atomicLoad(&out[s + EDGES]), c, sx));
  hc = wide_max(hc, reach_of(atomicLoad(&out[s + EDGES + 1u]), c, sx));
  hc = wide_max(hc, reach_of(atomicLoad(&out[s + EDGES + 2u]), c, sy));
  hc = wide_max(hc, reach_of(atomicLoad(&out[s + EDGES + 3u]), c, sy));
  // block `lane`'s samples along a side: 8 at (start + m + 1/2) steps of 2 hc / (32 c) where that step is a
  // cell or more, else steps of a cell from half a cell in while within the block (hc < 16 c: an i32)
  let b = i32(lane);
  let words = at + BLOCKS + lane * 9u;
  let two_hc = wide_times(hc, 2u);
  var count = 0u;
  if (!wide_less(two_hc, vec2<u32>(32u * c, 0u))) {
    for (var m = 0; m < 8; m++) {
      let k = 2 * ((b - 2) * 8 + m) + 1;
      var num = wide_times(two_hc, u32(abs(k)));
      if (k < 0) { num = wide_neg(num); }
      atomicStore(&out[words + 1u + count], bitcast<u32>(floor_div(wide_add(num, vec2<u32>(32u * c, 0u)), 64u * c)));
      count++;
    }
  } else {
    let h = i32(hc.x);
    let ci = i32(c);
    for (var m = 0; (2 * m + 1) * ci < h; m++) {
      atomicStore(&out[words + 1u + count], bitcast<u32>(floor_div32(2 * h * (b - 2) + 4 * ci * (m + 1), 4 * ci)));
      count++;
    }
  }
  atomicStore(&out[words], count);
  if (lane != 0u) { return; }
  let twice_c = 2u * c;
  // the box: 1.5 radii either side, x0 = floor((2 s - ceil(3 rc / ONE)) / (2 c)), x1 = ceil((2 s + ceil(3 rc / ONE)) / (2 c))
  let r3 = wide_add(wide_times(rc, 3u), vec2<u32>(ONE - 1u, 0u));
  let reach = vec2<u32>((r3.x >> OFFSET_BITS) | (r3.y << (32u - OFFSET_BITS)), r3.y >> OFFSET_BITS);
  var sums = array<vec2<u32>, 2>(sx, sy);
  for (var axis = 0u; axis < 2u; axis++) {
    let twice = wide_times(sums[axis], 2u);
    let low = max(0, floor_div(wide_add(twice, wide_neg(reach)), twice_c));
    let high = min(i32(C.n) - 1, -floor_div(wide_neg(wide_add(twice, reach)), twice_c));
    atomicStore(&out[at + BOX + 2u * axis], u32(low));
    atomicStore(&out[at + BOX + 2u * axis + 1u], u32(high));
    // the window's centre rounded, halves up: floor((2 s + c) / (2 c))
    atomicStore(&out[at + ROUNDED + axis], u32(floor_div(wide_add(twice, vec2<u32>(c, 0u)), twice_c)));
  }
  atomicStore(&out[at + HALF_SIDE], hc.x);
  atomicStore(&out[at + HALF_SIDE + 1u], hc.y);
}

// ---- the first parts' lists (`lists`, after `places`; the CPU twins: sample and reachSample, engine/detect/dynamics.ts) ----
// Per first part, LIST_PART_WORDS words: at 0 its cells in index order sampled to SAMPLED (a count, then
// the cells: `sample`), then the cells its mode is taken over (its cells, then its box's others in scan
// order, sampled alike: `reachSample`). A workgroup a part; its cells found by their label within its
// edges (in index order there too), each lane a run of cells, ranked by one prefix sum of the lanes'
// counts (a prefix sum of every chunk of 256 cells took some 5 times as long on SwiftShader).
const LIST_PART_WORDS: u32 = 2u * (1u + SAMPLED);

fn lists_of(field: u32) -> u32 {
  return places_of(C.fields) + field * TOP * LIST_PART_WORDS;
}

var<workgroup> scan: array<u32, 256>;
// what every invocation branches on, loaded once so that the barriers stay in uniform control flow:
// the parts listed, the box (x0, x1, y0, y1), the part's edges (x0, x1, y0, y1)
var<workgroup> uniform_words: array<u32, 9>;

/** The exclusive prefix sum of `flag` over the workgroup's lanes, and their total (Hillis and Steele). */
fn prefix(i: u32, flag: u32) -> vec2<u32> {
  workgroupBarrier();
  scan[i] = flag;
  workgroupBarrier();
  for (var d = 1u; d < 256u; d = d << 1u) {
    var v = 0u;
    if (i >= d) { v = scan[i - d]; }
    workgroupBarrier();
    scan[i] += v;
    workgroupBarrier();
  }
  return vec2<u32>(scan[i] - flag, scan[255]);
}

/**
 * Where entry k of a list of `length` lands in its sample of SAMPLED (sampledAt: entry floor(i length /
 * SAMPLED) at i where the list is longer), or NONE where the sample skips it.
 */
fn sampled_slot(k: u32, length: u32) -> u32 {
  if (length <= SAMPLED) { return k; }
  // the least i with floor(i length / SAMPLED) >= k, taken where that is k (k SAMPLED < 2^32: a list of a
  // part and its box has at most a field's cells, 2^24 at N = 4096)
  let i = (k * SAMPLED) / length + select(0u, 1u, (k * SAMPLED) % length != 0u);
  if (i >= SAMPLED) { return NONE; }
  // floor(i length / SAMPLED) without its product
  if (i * (length / SAMPLED) + (i * (length % SAMPLED)) / SAMPLED != k) { return NONE; }
  return i;
}

@compute @workgroup_size(256)
fn lists(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let field = wg.x / TOP;
  let r = wg.x % TOP;
  let place = places_of(field) + r * PLACE_WORDS;
  if (i == 0u) {
    uniform_words[0] = min(atomicLoad(&out[field * LIST_WORDS]), TOP);
    let edges = top_of(field) + 3u + r * (4u + SHAPE_WORDS) + 4u + EDGES;
    for (var k = 0u; k < 4u; k++) {
      uniform_words[1u + k] = atomicLoad(&out[place + BOX + k]);
      uniform_words[5u + k] = atomicLoad(&out[edges + k]);
    }
  }
  let u = workgroupUniformLoad(&uniform_words);
  if (r >= u[0]) { return; }
  let part = top_of(field) + 3u + r * (4u + SHAPE_WORDS);
  let root = atomicLoad(&out[part]);
  let c = atomicLoad(&out[part + 1u]);
  let w = u[2] - u[1] + 1u;
  let area = w * (u[4] - u[3] + 1u);
  let labels = label_at(field);
  // the box a run of cells a lane, each lane's part's cells in it counted: the mode's list is the part's
  // cells and the box's others
  let ring_run = (area + 255u) / 256u;
  let lo = min(area, i * ring_run);
  let hi = min(area, lo + ring_run);
  var inside = 0u;
  for (var k = lo; k < hi; k++) {
    if (atomicLoad(&out[labels + (u[3] + k / w) * C.n + u[1] + k % w]) == root) { inside++; }
  }
  let boxed = prefix(i, inside);
  let length = c + area - boxed.y;
  let at = lists_of(field) + r * LIST_PART_WORDS;
  let reach = at + 1u + SAMPLED;
  if (i == 0u) {
    atomicStore(&out[at], min(c, SAMPLED));
    atomicStore(&out[reach], min(length, SAMPLED));
  }
  // the part's cells in index order, row by row within its edges: the first of both lists. Each lane
  // takes a run of them, counts its own, then ranks them from one prefix sum of the counts
  let wp = u[6] - u[5] + 1u;
  let spanned = wp * (u[8] - u[7] + 1u);
  let run = (spanned + 255u) / 256u;
  var mine = 0u;
  for (var k = i * run; k < min(spanned, (i + 1u) * run); k++) {
    if (atomicLoad(&out[labels + (u[7] + k / wp) * C.n + u[5] + k % wp]) == root) { mine++; }
  }
  var rank = prefix(i, mine).x;
  for (var k = i * run; k < min(spanned, (i + 1u) * run); k++) {
    let cell = (u[7] + k / wp) * C.n + u[5] + k % wp;
    if (atomicLoad(&out[labels + cell]) != root) { continue; }
    let s = sampled_slot(rank, c);
    if (s != NONE) { atomicStore(&out[at + 1u + s], cell); }
    let q = sampled_slot(rank, length);
    if (q != NONE) { atomicStore(&out[reach + 1u + q], cell); }
    rank++;
  }
  // then the box's cells not the part's, in scan order: the rest of the mode's (those before this lane's
  // run, less the part's among them)
  rank = c + lo - boxed.x;
  for (var k = lo; k < hi; k++) {
    let cell = (u[3] + k / w) * C.n + u[1] + k % w;
    if (atomicLoad(&out[labels + cell]) == root) { continue; }
    let q = sampled_slot(rank, length);
    if (q != NONE) { atomicStore(&out[reach + 1u + q], cell); }
    rank++;
  }
}

// ---- the first parts' regions (`regions`, after `rank`; the CPU twin: topLists' regions, engine/detect/detect.ts) ----
// What a first part's frequency ratio reads (detect.ts regionsOf): the next part by rank, where one ranked
// after it holds 0.3 of its mass or more (the next holds the most of those), else its two halves across
// its principal axis, where it has 2 MIN_AREA cells or more. REGION_WORDS words a part: at 0 which
// (NO_REGIONS, NEXT_PART: the next first part's sample is the second region's list, PAST_PART: the next
// part is past the first ones, so its list is not made here, HALVED), then where halved each half's
// sample (a count, then SAMPLED cells: `sample` of its cells in index order).
const REGION_WORDS: u32 = 1u + 2u * (1u + SAMPLED);
const NO_REGIONS: u32 = 0u;
const NEXT_PART: u32 = 1u;
const PAST_PART: u32 = 2u;
const HALVED: u32 = 3u;
// how a halved part's cells are sided: by c times their offset from the centroid along x, along y (its
// axis where B = 0), or across its axis (sideOf)
const ACROSS: u32 = 0u;
const ALONG_X: u32 = 1u;
const ALONG_Y: u32 = 2u;

fn regions_of(field: u32) -> u32 {
  return lists_of(C.fields) + field * TOP * REGION_WORDS;
}

// what every invocation of `regions` branches on (loaded once: the barriers stay in uniform control
// flow): the parts listed, which regions, how the cells are sided, the part's edges (x0, x1, y0, y1)
var<workgroup> region_words: array<u32, 7>;
var<workgroup> paired: atomic<u32>;
var<workgroup> part_axis: Axis;

/** Which side of its part's axis a cell lies (first where < 0: detect.ts halves), `along` and the axis as `regions` keeps them. */
fn cell_side(cell: u32, c: u32, sx: vec2<u32>, sy: vec2<u32>, along: u32, axis: Axis) -> i32 {
  let dX = wide_add(wide_mul(c, cell % C.n), wide_neg(sx));
  let dY = wide_add(wide_mul(c, cell / C.n), wide_neg(sy));
  if (along == ALONG_X) { return wide_sign(dX); }
  if (along == ALONG_Y) { return wide_sign(dY); }
  return side_of(dX, dY, axis);
}

@compute @workgroup_size(256)
fn regions(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let field = wg.x / TOP;
  let r = wg.x % TOP;
  let listed = min(atomicLoad(&out[field * LIST_WORDS]), LISTED);
  let part = top_of(field) + 3u + r * (4u + SHAPE_WORDS);
  let root = atomicLoad(&out[part]);
  let c = atomicLoad(&out[part + 1u]);
  let mass = vec2<u32>(atomicLoad(&out[part + 2u]), atomicLoad(&out[part + 3u]));
  let s = part + 4u;
  if (i == 0u) { atomicStore(&paired, 0u); }
  workgroupBarrier();
  // a lane a listed component: after this part by rank (less mass, or as much and fewer cells, or as much
  // of both and a larger root), with 10 m >= 3 mass (the host's float64 m >= 0.3 mass, masses whole units
  // under 2^51)
  if (r < min(listed, TOP) && i < listed) {
    let entry = field * LIST_WORDS + 1u + 4u * i;
    let m = vec2<u32>(atomicLoad(&out[entry + 2u]), atomicLoad(&out[entry + 3u]));
    let cells = atomicLoad(&out[entry + 1u]);
    let same_mass = m.x == mass.x && m.y == mass.y;
    let after = wide_less(m, mass) || (same_mass && (cells < c || (cells == c && atomicLoad(&out[entry]) > root)));
    if (after && !wide_less(wide_times(m, 10u), wide_times(mass, 3u))) { atomicStore(&paired, 1u); }
  }
  workgroupBarrier();
  if (i == 0u) {
    region_words[0] = min(listed, TOP);
    var kind = NO_REGIONS;
    if (atomicLoad(&paired) != 0u) {
      kind = select(PAST_PART, NEXT_PART, r + 1u < TOP);
    } else if (c >= 2u * MIN_AREA) {
      kind = HALVED;
    }
    region_words[1] = kind;
    for (var k = 0u; k < 4u; k++) { region_words[3u + k] = atomicLoad(&out[s + EDGES + k]); }
    if (kind == HALVED) {
      // c times the second moments about the centroid: A = Mxx - Myy, B = Mxy (each a difference of
      // products of sums, none below 0)
      let cw = vec2<u32>(c, 0u);
      let sx = wide_at(s + SUM_X);
      let sy = wide_at(s + SUM_Y);
      let mxx = big_add(big_times(big_of(wide_at(s + SUM_XX)), cw), big_neg(big_times(big_of(sx), sx)));
      let myy = big_add(big_times(big_of(wide_at(s + SUM_YY)), cw), big_neg(big_times(big_of(sy), sy)));
      let a = big_add(mxx, big_neg(myy));
      let b = big_add(big_times(big_of(wide_at(s + SUM_XY)), cw), big_neg(big_times(big_of(sx), sy)));
      var along = ACROSS;
      if (big_sign(b) == 0) { along = select(ALONG_Y, ALONG_X, big_sign(a) >= 0); }
      region_words[2] = along;
      part_axis = axis_of(a, b);
    }
  }
  let u = workgroupUniformLoad(&region_words);
  if (r >= u[0]) { return; }
  let at = regions_of(field) + r * REGION_WORDS;
  if (i == 0u) { atomicStore(&out[at], u[1]); }
  if (u[1] != HALVED) { return; }
  let axis = part_axis;
  let sx = wide_at(s + SUM_X);
  let sy = wide_at(s + SUM_Y);
  // the part's cells in index order within its edges, a run a lane (as `lists`): each lane counts its
  // cells and those on the first side, then ranks them on each side from prefix sums of the counts
  let labels = label_at(field);
  let wp = u[4] - u[3] + 1u;
  let spanned = wp * (u[6] - u[5] + 1u);
  let run = (spanned + 255u) / 256u;
  let lo = min(spanned, i * run);
  let hi = min(spanned, lo + run);
  var mine = 0u;
  var firsts = 0u;
  for (var k = lo; k < hi; k++) {
    let cell = (u[5] + k / wp) * C.n + u[3] + k % wp;
    if (atomicLoad(&out[labels + cell]) != root) { continue; }
    mine++;
    if (cell_side(cell, c, sx, sy, u[2], axis) < 0) { firsts++; }
  }
  let ranked = prefix(i, mine);
  let first = prefix(i, firsts);
  let lengths = vec2<u32>(first.y, c - first.y);
  let second_at = at + 2u + SAMPLED;
  if (i == 0u) {
    atomicStore(&out[at + 1u], min(lengths.x, SAMPLED));
    atomicStore(&out[second_at], min(lengths.y, SAMPLED));
  }
  var ranks = vec2<u32>(first.x, ranked.x - first.x);
  for (var k = lo; k < hi; k++) {
    let cell = (u[5] + k / wp) * C.n + u[3] + k % wp;
    if (atomicLoad(&out[labels + cell]) != root) { continue; }
    if (cell_side(cell, c, sx, sy, u[2], axis) < 0) {
      let slot = sampled_slot(ranks.x, lengths.x);
      if (slot != NONE) { atomicStore(&out[at + 2u + slot], cell); }
      ranks.x++;
    } else {
      let slot = sampled_slot(ranks.y, lengths.y);
      if (slot != NONE) { atomicStore(&out[second_at + 1u + slot], cell); }
      ranks.y++;
    }
  }
}

// ---- the first parts' power sums (`first_sums`, after `places`, `lists` and `regions`; the CPU twin: powerSumsOf of each list) ----
// Per first part, FIRST_LISTS lists: its cells' sample, its mode's cells, its halves (no cells where it is
// not halved), then the modal map's MODAL_BLOCKS^2 blocks (modal.ts modalSamples: a block's samples in the
// field, rows of its offsets round the rounded centre from `places`), and per list and DFT bin k the sum
// over its cells of the cell's power at k, mean removed: the same float32 operations in the same order as
// shaders/power_sums.wgsl over a gathered list, but read where the window's planes lie ([plane][field][cell],
// in chunks of planes), with no gather. A dispatch a chunk: each bin is summed in the dispatch whose chunk
// holds its real plane (its imaginary one is there or at the start of the next chunk). `struct Planes` is
// generated (engine/gpu/components.ts PLANES_LAYOUT); `sums` is [fields x TOP x FIRST_LISTS x bins], every
// group's fields in one (P.first_field: the group's first).
const FIRST_LISTS: u32 = 4u + MODAL_BLOCKS * MODAL_BLOCKS;

@group(1) @binding(0) var<uniform> P: Planes;
// the chunk that holds plane 0 (the sum of u: the cell's mean)
@group(1) @binding(1) var<storage, read> plane_zero: array<f32>;
// planes P.first .. P.first + P.held, each P.size floats
@group(1) @binding(2) var<storage, read> chunk: array<f32>;
// the chunk after it (this one again where there is none)
@group(1) @binding(3) var<storage, read> next_chunk: array<f32>;
// per plane, the sum of its factor over the window (engine/detect/spectra.ts windowTotals)
@group(1) @binding(4) var<storage, read> totals: array<f32>;
@group(1) @binding(5) var<storage, read_write> sums: array<f32>;

/** A cell's power at bin k, mean removed (power_sums.wgsl's terms): `at` is its field's first float and the cell. */
fn power_at(at: u32, k: u32) -> f32 {
  let mean = plane_zero[at] * P.inverse_frames;
  let real = 2u * k - P.first;
  var imaginary = 0.0;
  if (real + 1u < P.held) {
    imaginary = chunk[(real + 1u) * P.size + at];
  } else {
    imaginary = next_chunk[at];
  }
  let re = chunk[real * P.size + at] - mean * totals[2u * k];
  let im = imaginary - mean * totals[2u * k + 1u];
  return re * re + im * im;
}

@compute @workgroup_size(256)
fn first_sums(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a 2D grid past 65535 workgroups
  let j = gid.y * 65535u * 256u + gid.x;
  if (j >= C.fields * TOP * FIRST_LISTS * P.bins) { return; }
  let k = j % P.bins + 1u;
  let list = (j / P.bins) % FIRST_LISTS;
  let r = (j / (P.bins * FIRST_LISTS)) % TOP;
  let field = j / (P.bins * FIRST_LISTS * TOP);
  // this chunk's bins only
  if (2u * k < P.first || 2u * k >= P.first + P.held) { return; }
  if (r >= min(atomicLoad(&out[field * LIST_WORDS]), TOP)) { return; }
  let base = (P.first_field + field) * C.cells;
  var power = 0.0;
  if (list < 4u) {
    // a list as `lists` and `regions` wrote it: a count, then its cells
    var at = lists_of(field) + r * LIST_PART_WORDS + list * (1u + SAMPLED);
    if (list >= 2u) {
      let regions = regions_of(field) + r * REGION_WORDS;
      at = regions + 1u + (list - 2u) * (1u + SAMPLED);
      if (atomicLoad(&out[regions]) != HALVED) { at = NONE; }
    }
    if (at != NONE) {
      let count = atomicLoad(&out[at]);
      for (var e = 0u; e < count; e++) { power = power + power_at(base + atomicLoad(&out[at + 1u + e]), k); }
    }
  } else {
    // block b's samples: rows of its offsets down the side, across them its offsets along it
    let b = list - 4u;
    let place = places_of(field) + r * PLACE_WORDS;
    let down = place + BLOCKS + (b / MODAL_BLOCKS) * 9u;
    let along = place + BLOCKS + (b % MODAL_BLOCKS) * 9u;
    let ox = i32(atomicLoad(&out[place + ROUNDED]));
    let oy = i32(atomicLoad(&out[place + ROUNDED + 1u]));
    let n = i32(C.n);
    for (var m = 0u; m < atomicLoad(&out[down]); m++) {
      let y = oy + bitcast<i32>(atomicLoad(&out[down + 1u + m]));
      if (y < 0 || y >= n) { continue; }
      for (var q = 0u; q < atomicLoad(&out[along]); q++) {
        let x = ox + bitcast<i32>(atomicLoad(&out[along + 1u + q]));
        if (x >= 0 && x < n) { power = power + power_at(base + u32(y * n + x), k); }
      }
    }
  }
  sums[(((P.first_field + field) * TOP + r) * FIRST_LISTS + list) * P.bins + k - 1u] = power;
}

// ---- the first parts' cells at their mode (`first_modes`, after every chunk's `first_sums`; the CPU twin: topModes) ----
// Per first part, MODE_FLOATS floats: its mode's bin (the strongest of its mode's cells' power sums, the
// lowest of equal ones: strongestBin, as mode_planes.wgsl takes it), then for each of its cells' sample
// (SAMPLED slots) and the winding circles' 64 cells, planes 0, 2 bin and 2 bin + 1 (0 where a slot holds
// no cell): what measureDynamics reads at the mode. A dispatch a chunk, each plane taken from the chunk
// that holds it; `modes` follows the sums in `sums`.
const MODE_CELLS: u32 = SAMPLED + 64u;
const MODE_FLOATS: u32 = 1u + 3u * MODE_CELLS;

@compute @workgroup_size(256)
fn first_modes(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a 2D grid past 65535 workgroups
  let j = gid.y * 65535u * 256u + gid.x;
  if (j >= C.fields * TOP * MODE_CELLS) { return; }
  let slot = j % MODE_CELLS;
  let r = (j / MODE_CELLS) % TOP;
  let field = j / (MODE_CELLS * TOP);
  if (r >= min(atomicLoad(&out[field * LIST_WORDS]), TOP)) { return; }
  let part = (P.first_field + field) * TOP + r;
  // the mode's cells' power sums: the part's second list
  let mode = (part * FIRST_LISTS + 1u) * P.bins;
  var bin = 1u;
  for (var k = 2u; k <= P.bins; k++) {
    if (sums[mode + k - 1u] > sums[mode + bin - 1u]) { bin = k; }
  }
  // after every field's sums (P.size: the floats of a plane, every field's cells)
  let at = (P.size / C.cells) * TOP * FIRST_LISTS * P.bins + part * MODE_FLOATS;
  if (slot == 0u && P.first == 0u) { sums[at] = f32(bin); }
  var cell = NONE;
  if (slot < SAMPLED) {
    let list = lists_of(field) + r * LIST_PART_WORDS;
    if (slot < atomicLoad(&out[list])) { cell = atomicLoad(&out[list + 1u + slot]); }
  } else {
    cell = atomicLoad(&out[places_of(field) + r * PLACE_WORDS + CIRCLE + slot - SAMPLED]);
  }
  let into = at + 1u + 3u * slot;
  let planes = vec3<u32>(0u, 2u * bin, 2u * bin + 1u);
  for (var q = 0u; q < 3u; q++) {
    let p = planes[q];
    if (p < P.first || p >= P.first + P.held) { continue; }
    if (cell == NONE) {
      sums[into + q] = 0.0;
    } else {
      sums[into + q] = chunk[(p - P.first) * P.size + (P.first_field + field) * C.cells + cell];
    }
  }
}
