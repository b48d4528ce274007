// A workgroup's 256 lanes of float32 sums halved in a tree, prepended to the modules that reduce a
// field so (shaders/basin.wgsl, shaders/erase.wgsl `regrowth`); their CPU twins halve in the same
// order (engine/detect/basin.ts halveLanes).

var<workgroup> lanes: array<array<f32, 256>, 5>;

// the first `count` sums of every lane halved in a tree into lane 0
fn halve(i: u32, count: u32) {
  workgroupBarrier();
  for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
    if (i < stride) {
      for (var q = 0u; q < count; q++) { lanes[q][i] = lanes[q][i] + lanes[q][i + stride]; }
    }
    workgroupBarrier();
  }
}
