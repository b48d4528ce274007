// The perturbation's kick added where the fields live (engine/gpu/backend.ts kick; docs/detection.md):
// `scale` takes, one workgroup a listed field, the field's rms of u times 1 / the pattern's rms (256
// lanes, each summing every 256th cell's square, then the lanes halved in a tree); `kick` then adds the
// pattern times its field's scale to u and u_prev, dispatch z the z-th listed field (the erasure, the
// perturbation's other kind, is shaders/erase.wgsl). `struct Kick` is generated (engine/gpu/inject.ts).
// CPU twins: kickScale (engine/field/kick.ts), WasmFieldBackend.kick (engine/cpu/wasm.ts); test:
// engine/gpu/kick.test.ts.

@group(0) @binding(0) var<uniform> K: Kick;
@group(0) @binding(1) var<storage, read> pattern: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read_write> scales: array<f32>;
@group(0) @binding(4) var<storage, read_write> cur: array<f32>;
@group(0) @binding(5) var<storage, read_write> prev: array<f32>;

var<workgroup> lanes: array<f32, 256>;

@compute @workgroup_size(256)
fn scale(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let base = targets[wg.x] * K.cells;
  var s = 0.0;
  for (var c = i; c < K.cells; c += 256u) {
    let v = cur[base + c];
    s = s + v * v;
  }
  lanes[i] = s;
  workgroupBarrier();
  for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
    if (i < stride) { lanes[i] = lanes[i] + lanes[i + stride]; }
    workgroupBarrier();
  }
  if (i == 0u) { scales[wg.x] = sqrt(lanes[0] * K.inverse_cells) * K.inverse_rms; }
}

@compute @workgroup_size(256)
fn kick(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a field's cells on a 2D grid past 65535 workgroups, the listed field on z
  let i = gid.y * 65535u * 256u + gid.x;
  if (i >= K.cells) { return; }
  let w = pattern[i] * scales[gid.z];
  let at = targets[gid.z] * K.cells + i;
  cur[at] += w;
  prev[at] += w;
}
