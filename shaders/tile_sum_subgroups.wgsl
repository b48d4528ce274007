// The step's tile sum with subgroups (the host adds `enable subgroups;` in front): one subgroupAdd
// per subgroup, each subgroup's sum into shared memory, one barrier, then every subgroup adds those
// few sums (one a lane on a 32-wide GPU) with a second subgroupAdd. The sums are added in another
// order than shaders/tile_sum.wgsl's, so the books differ from it in float32 round-off only.
// Its own small array, not common.wgsl's `partial`: the step then zeroes (as WebGPU requires of
// workgroup memory) one vec4 a subgroup at most, not TILE x TILE of them.

// one sum a subgroup; 4 lanes is the smallest subgroup WebGPU allows
var<workgroup> subgroup_sums: array<vec4<f32>, STEP_W * STEP_H / ROWS / 4u>;

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
  if (lanes.lane == 0u) { subgroup_sums[lanes.group] = mine; }
  workgroupBarrier();
  var acc = vec4<f32>(0.0);
  for (var k = lanes.lane; k < lanes.groups; k += lanes.size) { acc += subgroup_sums[k]; }
  return subgroupAdd(acc);
}

// one sum a subgroup of the energy kernels' TILE x TILE workgroups
var<workgroup> energy_sums: array<f32, TILE * TILE / 4u>;

/** The TILE x TILE workgroup's sum of `v` (energy, potential), valid in every invocation. Every invocation must call it. */
fn workgroup_total(lanes: Lanes, v: f32) -> f32 {
  let mine = subgroupAdd(v);
  if (lanes.lane == 0u) { energy_sums[lanes.group] = mine; }
  workgroupBarrier();
  var acc = 0.0;
  for (var k = lanes.lane; k < lanes.groups; k += lanes.size) { acc += energy_sums[k]; }
  return subgroupAdd(acc);
}
