// Evolve's recorded window reduced on the device (docs/detection.md, engine/detect/spectra.ts):
// `accumulate` adds one frame of u (every cell of every field) into the window's planes, sum u,
// sum |u| and the Hann-windowed DFT sums of bins 1..T/2, so that the frames are never kept or read
// back. Planes first..first+count of the window go to this dispatch's buffer, [plane][field][cell].
// CPU twin: engine/cpu/spectra.ts accumulateWindow; test: engine/detect/spectra.test.ts.

struct Window {
  size: u32,
  slot: u32,
  first: u32,
  count: u32,
  planes: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

@group(0) @binding(0) var<uniform> W: Window;
@group(0) @binding(1) var<storage, read> u: array<f32>;
// [slot][plane]: the factor of u at each frame (engine/detect/spectra.ts windowCoefficients)
@group(0) @binding(2) var<storage, read> coef: array<f32>;
@group(0) @binding(3) var<storage, read_write> acc: array<f32>;

@compute @workgroup_size(256)
fn accumulate(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a 2D grid past 65535 workgroups
  let i = gid.y * 65535u * 256u + gid.x;
  if (i >= W.size) { return; }
  let v = u[i];
  for (var k = 0u; k < W.count; k++) {
    let p = W.first + k;
    var term = v;
    if (p == 1u) { term = abs(v); } else if (p > 1u) { term = v * coef[W.slot * W.planes + p]; }
    let at = k * W.size + i;
    // the first frame sets the sums (as its twin does: -0 stays -0)
    if (W.slot == 0u) { acc[at] = term; } else { acc[at] = acc[at] + term; }
  }
}
