// The step's tile sum with subgroups (the host adds `enable subgroups;` in front): one subgroupAdd
// per subgroup, each subgroup's sum into shared memory, one barrier, then every subgroup adds those
// few sums (one a lane on a 32-wide GPU) with a second subgroupAdd. The sums are added in another
// order than shaders/tile_sum.wgsl's, so the books differ from it in float32 round-off only.

struct Lanes {
  @builtin(local_invocation_index) lid: u32,
  @builtin(subgroup_id) group: u32,
  @builtin(num_subgroups) groups: u32,
  @builtin(subgroup_invocation_id) lane: u32,
  @builtin(subgroup_size) size: u32,
}

/** The workgroup's sum of `work`, valid in every invocation. Every invocation must call it. */
fn tile_total(lanes: Lanes, work: vec4<f32>) -> vec4<f32> {
  let mine = subgroupAdd(work);
  if (lanes.lane == 0u) { partial[lanes.group] = mine; }
  workgroupBarrier();
  var acc = vec4<f32>(0.0);
  for (var k = lanes.lane; k < lanes.groups; k += lanes.size) { acc += partial[k]; }
  return subgroupAdd(acc);
}
