// Row sums on the GPU, so a timeline sample reads back a handful of floats, not every tile:
// dst[dst_offset + row] = sum of src[row * len .. row * len + len). One workgroup per row.
// Also adds a wave into one field (inject): dst[dst_offset + i] += src[i] for i < len.
// `struct Reduce` is generated from engine/field/params.ts. CPU twins: plain sums (engine/cpu) and Math.fround(u + w) (WasmFieldBackend.inject).

@group(0) @binding(0) var<uniform> R: Reduce;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn sum_rows(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  var acc = 0.0;
  for (var i = lid; i < R.len; i += 256u) { acc += src[wid.x * R.len + i]; }
  partial[lid] = acc;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (lid < s) { partial[lid] += partial[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { dst[R.dst_offset + wid.x] = partial[0]; }
}

@compute @workgroup_size(256)
fn add_wave(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.y * 65535u * 256u + gid.x;
  if (i < R.len) { dst[R.dst_offset + i] += src[i]; }
}
