// Row sums on the GPU, so a timeline sample reads back a handful of floats, not every tile:
// dst[dst_offset + row] = sum of src[row * len .. row * len + len). One workgroup per row.
// Also folds the step's per-tile ledger terms into the books (fold_ledger).
// `struct Reduce` is generated from engine/field/params.ts. CPU twins: plain sums (engine/cpu) and the
// reference's running ledger (engine/cpu/field_step.ts).

@group(0) @binding(0) var<uniform> R: Reduce;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
// fold_ledger's Kahan compensations, beside the sums in dst.
@group(0) @binding(3) var<storage, read_write> lost: array<f32>;

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

// The first pass of a long row's sum (a timeline sample's energy at N = 2048 sums 16,384 tiles a
// row): workgroup (chunk, row) adds CHUNK entries of its row into dst[dst_offset + row * count + chunk]
// (count: the chunks a row, at least its own; the others get 0); sum_rows then adds each row's
// chunks. One workgroup a row made a serial loop of len / 256 dependent loads on one core of the GPU.
// `const CHUNK` comes from the host (engine/gpu/backend.ts), which sizes the chunks by it.

@compute @workgroup_size(256)
fn sum_chunks(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let end = min((wid.x + 1u) * CHUNK, R.len);
  var acc = 0.0;
  for (var i = wid.x * CHUNK + lid; i < end; i += 256u) { acc += src[wid.y * R.len + i]; }
  partial[lid] = acc;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (lid < s) { partial[lid] += partial[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { dst[R.dst_offset + wid.y * R.count + wid.x] = partial[0]; }
}

// `count` steps of tile sums (src: [step][field][tile][column], the step kernel's ring, len = fields x
// tiles) added in step order into the running books (dst: [column][field][tile], Kahan-compensated in
// `lost`), as the per-step read-modify-write did; float32 keeps long runs honest this way.
@compute @workgroup_size(256)
fn fold_ledger(@builtin(global_invocation_id) gid: vec3<u32>) {
  let t = gid.y * 65535u * 256u + gid.x;
  if (t >= R.len) { return; }
  var sum = vec4<f32>(dst[t], dst[R.len + t], dst[2u * R.len + t], dst[3u * R.len + t]);
  var comp = vec4<f32>(lost[t], lost[R.len + t], lost[2u * R.len + t], lost[3u * R.len + t]);
  for (var s = 0u; s < R.count; s++) {
    let k = 4u * (s * R.len + t);
    let y = vec4<f32>(src[k], src[k + 1u], src[k + 2u], src[k + 3u]) - comp;
    let next = sum + y;
    comp = (next - sum) - y;
    sum = next;
  }
  for (var c = 0u; c < 4u; c++) {
    dst[c * R.len + t] = sum[c];
    lost[c * R.len + t] = comp[c];
  }
}
