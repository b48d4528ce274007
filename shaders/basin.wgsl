// A field-wide structure's basin measured where the fields live (engine/gpu/record.ts perturbationSums;
// docs/detection.md, "The perturbation experiment"): one workgroup a kicked field, the five centred
// sums of its stability sums before the kick, |the kick's pattern| and its stability sums after
// (before x |kick|, before^2, |kick|^2, before x after, after^2). 256 lanes each sum every 256th
// cell, then the lanes are halved in a tree: the three totals first (their means), then the products.
// `struct Basin` is generated (engine/gpu/record.ts BASIN_LAYOUT), `lanes` and `halve` prepended
// (shaders/lanes.wgsl). CPU twin: basinSums (engine/detect/basin.ts), the same float32 operations in
// the same order; test: engine/gpu/basin.test.ts.

@group(0) @binding(0) var<uniform> B: Basin;
// the kicked fields
@group(0) @binding(1) var<storage, read> targets: array<u32>;
// [field][cell]: the sums held before the kick, and now
@group(0) @binding(2) var<storage, read> before: array<f32>;
@group(0) @binding(3) var<storage, read> pattern: array<f32>;
@group(0) @binding(4) var<storage, read> after: array<f32>;
// five sums a kicked field
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn basin(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let base = targets[wg.x] * B.cells;
  var b = 0.0;
  var k = 0.0;
  var a = 0.0;
  for (var c = i; c < B.cells; c += 256u) {
    b = b + before[base + c];
    k = k + abs(pattern[c]);
    a = a + after[base + c];
  }
  lanes[0][i] = b;
  lanes[1][i] = k;
  lanes[2][i] = a;
  halve(i, 3u);
  let mb = lanes[0][0] * B.inverse_cells;
  let mk = lanes[1][0] * B.inverse_cells;
  let ma = lanes[2][0] * B.inverse_cells;
  // every lane has its means before the lanes take the products
  workgroupBarrier();
  var s = array<f32, 5>(0.0, 0.0, 0.0, 0.0, 0.0);
  for (var c = i; c < B.cells; c += 256u) {
    let x = before[base + c] - mb;
    let y = abs(pattern[c]) - mk;
    let z = after[base + c] - ma;
    s[0] = s[0] + x * y;
    s[1] = s[1] + x * x;
    s[2] = s[2] + y * y;
    s[3] = s[3] + x * z;
    s[4] = s[4] + z * z;
  }
  for (var q = 0u; q < 5u; q++) { lanes[q][i] = s[q]; }
  halve(i, 5u);
  if (i < 5u) { out[wg.x * 5u + i] = lanes[i][0]; }
}
