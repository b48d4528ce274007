// The kernels' parameter blocks, declared once, as plain data (no imports): params.ts builds the
// WGSL structs and uniform bytes from them, and scripts/gen.mjs the WASM kernel's job block constants.

export const STEP_PARAM_LAYOUT = [
  ['n', 'u32'],
  ['fields', 'u32'],
  ['noise_key', 'u32'],
  ['tiles_per_field', 'u32'],
  /** The GPU step's ring slot for this step's tile sums (the host sets it per step; not a constant of the medium). */
  ['ledger_slot', 'u32'],
  /**
   * Where the GPU step writes each tile's energy of the state it reads (a timeline sample's, taken by
   * the step after it: words into its tile-sums buffer); 0: none (the host sets it per step).
   */
  ['energy_at', 'u32'],
  ['c2', 'f32'],
  ['damping', 'f32'],
  ['nonlinearity', 'f32'],
  ['viscosity', 'f32'],
  ['noise', 'f32'],
  ['sponge_max', 'f32'],
  ['sponge_width', 'f32'],
  ['sponge_inv_width', 'f32'],
  /**
   * Fields from this one on run the fields before them again (EngineOptions.rerun): field f draws the
   * noise of field f - rerun_from, at rerun_noise's amplitude. `fields` where there is no rerun.
   */
  ['rerun_from', 'u32'],
  ['rerun_noise', 'f32'],
  /**
   * The noise keys of the 2nd, 3rd and 4th steps of a dispatch that takes STEPS_PER_DISPATCH of them
   * (shaders/field_steps.wgsl; `noise_key` is the first's). The host sets them; a single step reads none.
   */
  ['key_1', 'u32'],
  ['key_2', 'u32'],
  ['key_3', 'u32'],
  /**
   * The absolute step of the dispatch's first step, and lowbias32(seed): a field that rested (params.ts
   * stepTable) keys its noise by its own steps, noiseKey(seed, step - rested), from them. The host sets
   * them; a field that never rested reads the keys above, which are the same function of step 0 on.
   */
  ['step', 'u32'],
  ['seed_key', 'u32'],
] as const

/** Steps a dispatch of shaders/field_steps.wgsl takes: `noise_key` and the three keys after it. */
export const STEPS_PER_DISPATCH = 4

/** Uniforms of shaders/reduce.wgsl (row sums, wave injection, and `count` steps of tile sums folded into the books). */
export const REDUCE_PARAM_LAYOUT = [
  ['len', 'u32'],
  ['dst_offset', 'u32'],
  ['count', 'u32'],
] as const

/** Uniforms of shaders/dream.wgsl: the side, the batch, cells per field, and the preview's side. */
export const DREAM_PARAM_LAYOUT = [
  ['n', 'u32'],
  ['fields', 'u32'],
  ['cells', 'u32'],
  ['side', 'u32'],
  /**
   * The fields the thresholds' histograms are made for, from `first` on, `count` of them: as many as
   * one histogram buffer holds (768 KiB a field), a group at a time where the batch has more.
   */
  ['first', 'u32'],
  ['count', 'u32'],
] as const

/**
 * The CPU kernel's job block (engine/cpu/wasm.ts writes it, engine/cpu/simd/assembly/field.ts reads
 * it): these i32 words, then the f32 members of STEP_PARAM_LAYOUT in their order, then the `go` word
 * the helper threads wait on. scripts/gen.mjs writes the word indices for the kernel (job.gen.ts).
 */
export const JOB_HEADER = [
  'n',
  'fields',
  /** prev at job start; buf1 cur, buf2 next; they rotate every step */
  'buf0',
  'buf1',
  'buf2',
  'steps',
  'first_step',
  'seed',
  'sample_interval',
  'threads',
  /** f64 [threads][fields][4]: bulk, boundary, saturation, noise */
  'ledger',
  /** f64 [samples][fields][threads][5]: energy, then the ledger at that moment */
  'samples',
  'barrier_count',
  'barrier_phase',
  /** STEP_PARAM_LAYOUT's one u32 constant the kernel reads */
  'rerun_from',
  /** u32 [2 fields]: the step's table (params.ts stepTable): the field each field draws, then the steps each rested */
  'draws',
] as const

/** The step constants the job block carries, in STEP_PARAM_LAYOUT's order. */
export const JOB_PARAMS = STEP_PARAM_LAYOUT.filter(([, t]) => t === 'f32').map(([k]) => k)

/** Word index of each job block entry: the header, `params` (the first f32 constant), `go`, and `words` (the block's length). */
export const JOB_WORDS = {
  ...(Object.fromEntries(JOB_HEADER.map((k, i) => [k, i])) as Record<(typeof JOB_HEADER)[number], number>),
  params: JOB_HEADER.length,
  go: JOB_HEADER.length + JOB_PARAMS.length,
  words: JOB_HEADER.length + JOB_PARAMS.length + 1,
}
