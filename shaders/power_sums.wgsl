// Power sums made where the window's planes live (docs/detection.md; engine/gpu/record.ts drives it):
// per list of cells and DFT bin k, the sum over the list's cells of the cell's power at k, mean
// removed. Detection reads a structure's spectra so: its dominant modes and its modal map's blocks.
// The lists' cells' planes are first gathered into `rows` ([row][plane], shaders/gather.wgsl);
// `bounds` holds, per list, the row where it begins and the row where it ends. An invocation sums
// one bin of one list, its cells in the order listed. `struct PowerSums` is generated
// (engine/gpu/record.ts POWER_SUMS_LAYOUT). CPU twin: powerSumsOf (engine/detect/spectra.ts), the
// same float32 operations in the same order; test: engine/discovery/record.test.ts.

@group(0) @binding(0) var<uniform> S: PowerSums;
@group(0) @binding(1) var<storage, read> bounds: array<u32>;
@group(0) @binding(2) var<storage, read> rows: array<f32>;
// per plane, the sum of its factor over the window (engine/detect/spectra.ts windowTotals)
@group(0) @binding(3) var<storage, read> totals: array<f32>;
// per list, a sum a bin
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn power_sums(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a 2D grid past 65535 workgroups
  let j = gid.y * 65535u * 256u + gid.x;
  if (j >= S.count * S.bins) { return; }
  let list = S.base + j / S.bins;
  let k = j % S.bins + 1u;
  var power = 0.0;
  for (var row = bounds[2u * list]; row < bounds[2u * list + 1u]; row++) {
    let cell = row * S.planes;
    let mean = rows[cell] * S.inverse_frames;
    let re = rows[cell + 2u * k] - mean * totals[2u * k];
    let im = rows[cell + 2u * k + 1u] - mean * totals[2u * k + 1u];
    power = power + (re * re + im * im);
  }
  out[list * S.bins + k - 1u] = power;
}
