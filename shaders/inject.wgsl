// Waves added to fields (engine/gpu/inject.ts): dispatch z adds wave z of `waves` ([wave][cell]) to
// u and u_prev of field targets[z], a displacement at rest; a field is listed once a dispatch.
// `struct Inject` is generated (engine/gpu/inject.ts). CPU twin: WasmFieldBackend.inject
// (engine/cpu/wasm.ts), Math.fround(u + w); test: engine/gpu/inject.test.ts.

@group(0) @binding(0) var<uniform> P: Inject;
@group(0) @binding(1) var<storage, read> waves: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<u32>;
@group(0) @binding(3) var<storage, read_write> cur: array<f32>;
@group(0) @binding(4) var<storage, read_write> prev: array<f32>;

@compute @workgroup_size(256)
fn inject(@builtin(global_invocation_id) gid: vec3<u32>) {
  // a field's cells on a 2D grid past 65535 workgroups (N = 4096), the wave on z
  let i = gid.y * 65535u * 256u + gid.x;
  if (i >= P.cells) { return; }
  let w = waves[gid.z * P.cells + i];
  let at = targets[gid.z] * P.cells + i;
  cur[at] += w;
  prev[at] += w;
}
