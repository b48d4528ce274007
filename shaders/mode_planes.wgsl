// Cells read at their mode's bin, taken where the window's planes live (docs/detection.md;
// engine/gpu/record.ts drives it): for each listed cell, the strongest bin of its mode's power sums
// (made by shaders/power_sums.wgsl earlier in the same pass, at the head of `out`; the lowest of equal
// bins, as engine/detect/dynamics.ts strongestBin takes it), then the bin and the cell's planes 0, 2 bin
// and 2 bin + 1 into 4 floats of `out`, from whichever chunk of the window's planes holds each (a
// dispatch a chunk). `struct ModePlanes` is generated (engine/gpu/record.ts MODE_PLANES_LAYOUT). CPU
// twin: the planes where the CPU keeps them (engine/cpu/spectra.ts FramePlanes); test:
// engine/discovery/record.test.ts.

@group(0) @binding(0) var<uniform> M: ModePlanes;
// per cell read, a pair: field * cells + cell, and its mode's list
@group(0) @binding(1) var<storage, read> cells: array<u32>;
// planes first .. first + held of the window, each `size` long
@group(0) @binding(2) var<storage, read> chunk: array<f32>;
// the lists' power sums (bins a list) from 0, the cells' 4 floats from `planes_at`
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

fn take(p: u32, at: u32, into: u32) {
  if (p >= M.first && p < M.first + M.held) { out[into] = chunk[(p - M.first) * M.size + at]; }
}

@compute @workgroup_size(256)
fn mode_planes(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a 2D grid past 65535 workgroups
  let j = gid.y * 65535u * 256u + gid.x;
  if (j >= M.count) { return; }
  let at = cells[2u * j];
  let sums = cells[2u * j + 1u] * M.bins;
  var bin = 1u;
  for (var k = 2u; k <= M.bins; k++) {
    if (out[sums + k - 1u] > out[sums + bin - 1u]) { bin = k; }
  }
  let into = M.planes_at + 4u * j;
  out[into] = f32(bin);
  take(0u, at, into + 1u);
  take(2u * bin, at, into + 2u);
  take(2u * bin + 1u, at, into + 3u);
}
