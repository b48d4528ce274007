// The step's tile sum where the device has no subgroups (a browser may not offer them): every
// invocation's four ledger terms through shared memory, reduce_rows (two barriers, then serial
// sums of 16 and of 4). Its twin with subgroups is shaders/tile_sum_subgroups.wgsl; the host
// prepends one of the two to shaders/field_step.wgsl (engine/gpu/context.ts fieldStepModule).

struct Lanes {
  @builtin(local_invocation_index) lid: u32,
}

// Only invocation 0 reads the sum it wrote: another reading it with no barrier between would race.

/** The workgroup's sum of `work` in invocation 0 (zero in the others). Every invocation must call it. */
fn tile_total(lanes: Lanes, work: vec4<f32>) -> vec4<f32> {
  partial[lanes.lid] = work;
  reduce_rows(lanes.lid, STEP_W * STEP_H / ROWS / TILE);
  var total = vec4<f32>(0.0);
  if (lanes.lid == 0u) { total = partial[0]; }
  return total;
}

/** The TILE x TILE workgroup's sum of `v` (energy, potential) in invocation 0 (zero in the others). Every invocation must call it. */
fn workgroup_total(lanes: Lanes, v: f32) -> f32 {
  partial[lanes.lid] = vec4<f32>(v, 0.0, 0.0, 0.0);
  reduce_workgroup(lanes.lid);
  var total = 0.0;
  if (lanes.lid == 0u) { total = partial[0].x; }
  return total;
}
