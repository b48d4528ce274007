// Every plane of the listed cells (engine/gpu/record.ts: the cells of the lists whose power sums
// detection reads, engine/detect/detect.ts cellsRead) copied from one chunk of the window's planes,
// [plane][field][cell], into out, [listed cell][plane]: a scratch buffer that shaders/power_sums.wgsl
// sums from, on the device (docs/detection.md, "What comes back from the GPU").
// `struct Gather` is generated (engine/gpu/record.ts GATHER_LAYOUT). The CPU twin reads the same
// planes where they are (engine/cpu/spectra.ts FramePlanes); test: engine/discovery/record.test.ts.

@group(0) @binding(0) var<uniform> G: Gather;
// field * cells + cell of each listed cell
@group(0) @binding(1) var<storage, read> listed: array<u32>;
// planes first .. first + held of the window, each `size` long
@group(0) @binding(2) var<storage, read> chunk: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn gather(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a 2D grid past 65535 workgroups
  let j = gid.y * 65535u * 256u + gid.x;
  if (j >= G.count) { return; }
  let at = listed[G.base + j];
  for (var k = 0u; k < G.held; k++) { out[j * G.planes + G.first + k] = chunk[k * G.size + at]; }
}
