// The modal maps' power sums made where the window's planes live (docs/detection.md, "Signature";
// engine/gpu/record.ts drives it): per window, per DFT bin k and block b, the sum over the block's
// sampled cells of the cell's power at k, mean removed. The cells' planes are first gathered into
// `rows` ([row][plane], shaders/gather.wgsl); `bounds` holds, per window, the rows where each of its
// 16 blocks begins and the row where its last ends. An invocation sums one bin of one block, its cells
// in the order listed. `struct Modal` is generated (engine/gpu/record.ts MODAL_LAYOUT). CPU twin:
// modalSums (engine/detect/modal.ts), the same float32 operations in the same order; test:
// engine/discovery/record.test.ts.

@group(0) @binding(0) var<uniform> M: Modal;
@group(0) @binding(1) var<storage, read> bounds: array<u32>;
@group(0) @binding(2) var<storage, read> rows: array<f32>;
// per plane, the sum of its factor over the window (engine/detect/spectra.ts windowTotals)
@group(0) @binding(3) var<storage, read> totals: array<f32>;
// per window, bins x 16 sums, bin-major
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

const BLOCKS = 16u;

@compute @workgroup_size(256)
fn modal(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a 2D grid past 65535 workgroups
  let j = gid.y * 65535u * 256u + gid.x;
  let per = M.bins * BLOCKS;
  if (j >= M.count * per) { return; }
  let win = M.base + j / per;
  let at = j % per;
  let k = at / BLOCKS + 1u;
  let b = at % BLOCKS;
  var power = 0.0;
  for (var row = bounds[win * (BLOCKS + 1u) + b]; row < bounds[win * (BLOCKS + 1u) + b + 1u]; row++) {
    let cell = row * M.planes;
    let mean = rows[cell] * M.inverse_frames;
    let re = rows[cell + 2u * k] - mean * totals[2u * k];
    let im = rows[cell + 2u * k + 1u] - mean * totals[2u * k + 1u];
    power = power + (re * re + im * im);
  }
  out[win * per + at] = power;
}
