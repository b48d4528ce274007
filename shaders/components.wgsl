// A stability map's components and their masses, made where the maps live (docs/detection.md, "What
// one read a generation would take", items 1 and 2): the first bricks of detection on the device.
// Every value here is an integer or a correctly rounded f32 product, so any adapter gives the CPU
// twin's numbers bit for bit, whatever order its invocations run in.
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
// `struct Components`, MIN_AREA and LISTED (entries a list holds) are generated
// (engine/gpu/components.ts). `out` is [lists: fields x (length, LISTED x 4 words)] [peaks: fields]
// [labels: fields x cells] [tally: fields x cells x (cells, mass low, mass high)]; a list's length
// counts every component listed, those past LISTED left out.

const NONE: u32 = 0xffffffffu;
const NO_PEAK: u32 = 0xffffffffu;
// fround(0.45) by its bits: how an abstract float literal rounds to f32 is not pinned
const THRESHOLD_OF_PEAK: f32 = bitcast<f32>(0x3ee66666u);

@group(0) @binding(0) var<uniform> C: Components;
@group(0) @binding(1) var<storage, read> maps: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<atomic<u32>>;

var<workgroup> lanes: array<f32, 256>;
var<workgroup> nan_seen: atomic<u32>;

fn value(field: u32, cell: u32) -> f32 {
  return maps[C.base + field * C.stride + cell] * C.scale;
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

@compute @workgroup_size(256)
fn peak(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let field = wg.x;
  var m = 0.0;
  for (var c = i; c < C.cells; c += 256u) {
    let v = value(field, c);
    if (!finite(v)) { atomicStore(&nan_seen, 1u); } else { m = max(m, v); }
  }
  lanes[i] = m;
  workgroupBarrier();
  for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
    if (i < stride) { lanes[i] = max(lanes[i], lanes[i + stride]); }
    workgroupBarrier();
  }
  let nan = atomicLoad(&nan_seen);
  if (i == 0u) {
    if (nan != 0u) { atomicStore(&out[peak_at(field)], NO_PEAK); } else { atomicStore(&out[peak_at(field)], bitcast<u32>(lanes[0])); }
    atomicStore(&out[field * LIST_WORDS], 0u);
  }
}

/** The cell of the field's grid this invocation takes (a 2D grid past 65,535 workgroups), or C.cells past the end. */
fn cell_of(gid: vec3<u32>) -> u32 {
  return min(gid.y * 65535u * 256u + gid.x, C.cells);
}

@compute @workgroup_size(256)
fn mask(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = cell_of(gid);
  if (c >= C.cells) { return; }
  let field = gid.z;
  let bits = atomicLoad(&out[peak_at(field)]);
  let top = bitcast<f32>(bits);
  var l = NONE;
  if (bits != NO_PEAK && top > 0.0 && value(field, c) >= THRESHOLD_OF_PEAK * top) { l = c; }
  atomicStore(&out[label_at(field) + c], l);
  let t = tally_at(field, c);
  atomicStore(&out[t], 0u);
  atomicStore(&out[t + 1u], 0u);
  atomicStore(&out[t + 2u], 0u);
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
}
