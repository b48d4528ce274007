// Evolve's window brought back only where detection reads it (docs/detection.md, engine/gpu/record.ts):
// `gather` copies every plane of the listed cells (engine/detect/detect.ts cellsRead names them) from
// one chunk of the window's planes, [plane][field][cell], into out, [listed cell][plane], so that a
// batch reads back a few hundred cells of each field instead of its 34 whole planes.
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
