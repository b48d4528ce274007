// Dreaming consolidates the medium (docs/dream.md): observe stability (time-averaged |u| over a
// window), prune transients (damp cells below a stability percentile), amplify persistent structure,
// mutate (deep only: small kicks on stable cells), settle. Runs on any backend through the engine,
// on every field of a batch at once, each field in its own mode; on the GPU the field never comes
// back to the host (shaders/dream.wgsl), only each field's report.
import type { DreamMode } from '../contracts/registry.js'
import type { EditFactors } from '../field/backend.js'
import type { Engine } from '../field/engine_api.js'
import { lowbias32 } from '../field/noise.js'
import { meanOf } from '../cpu/dream.js'

export interface DreamParams extends EditFactors {
  /** Steps over which stability is averaged, and how many snapshots of |u| that average takes. */
  observe_steps: number
  observe_samples: number
  /** Steps run after the edits, so the field settles before anyone reads it. */
  settle_steps: number
}

/** The two modes. Light trims; deep cuts harder, amplifies more, and mutates. */
export const DREAM_PARAMS: Record<DreamMode, DreamParams> = {
  light: {
    observe_steps: 200,
    observe_samples: 10,
    prune_percentile: 0.3,
    prune_factor: 0.5,
    amplify_percentile: 0.85,
    amplify_factor: 1.1,
    mutate_fraction: 0,
    mutate_amplitude: 0,
    settle_steps: 100,
  },
  deep: {
    observe_steps: 200,
    observe_samples: 10,
    prune_percentile: 0.5,
    prune_factor: 0.15,
    amplify_percentile: 0.8,
    amplify_factor: 1.2,
    mutate_fraction: 0.02,
    mutate_amplitude: 0.05,
    settle_steps: 100,
  },
}

/** Steps a dream takes in either mode (the same, so that a batch stays in step): its observation and settling. */
export const DREAM_STEPS = DREAM_PARAMS.light.observe_steps + DREAM_PARAMS.light.settle_steps

/** Side of the stability preview in a report. */
export const PREVIEW_SIDE = 8

export interface DreamReport {
  mode: DreamMode | 'none'
  steps_observed: number
  energy_before: number
  energy_after: number
  pruned_fraction: number
  amplified_fraction: number
  mutated_cells: number
  /** Stability averaged onto PREVIEW_SIDE x PREVIEW_SIDE, scaled so the largest is 1 (row-major). */
  stability_preview: number[]
}

/**
 * |u| of every field added to the stability sums where the fields live (engine.accumulateStability),
 * `samples` times spread evenly across `steps` steps, the first clearing them. Returns the samples taken.
 */
export async function observeHeld(engine: Engine, steps: number, samples: number): Promise<number> {
  const stride = Math.max(1, Math.floor(steps / samples))
  let taken = 0
  for (let done = 0; done < steps; done += stride) {
    await engine.step(Math.min(stride, steps - done))
    await engine.accumulateStability(taken === 0)
    taken++
    // a macrotask turn: on the CPU backend every await above resolves at once, and timers (a
    // publisher, a server's other requests) would otherwise wait for the whole observation
    await yieldToEventLoop()
  }
  return taken
}

/**
 * Mean |u| of every field over `steps` steps, from `samples` snapshots spread evenly across them: the
 * sums kept where the fields live and read back once (on the GPU one read where there was one a sample).
 */
export async function observeStability(engine: Engine, steps: number, samples: number): Promise<Float32Array> {
  const taken = await observeHeld(engine, steps, samples)
  // no sample taken (no steps): nothing cleared the sums, which are another window's
  if (!taken) return new Float32Array(engine.size * engine.size * engine.fields)
  return meanOf(await engine.stabilitySums(), taken)
}

/** Box-blur passes applied to the edit mask. */
export const MASK_SMOOTHING_PASSES = 3
// A hard-edged mask puts steps into u, and a step is gradient energy: measured, a pruning mask on a
// speckled stability map raised the energy it was meant to cut. Three 3 x 3 box blurs turn every
// edge into a ramp a few cells wide.

/** Lets timers and I/O run (setImmediate in Node, a zero timeout in a browser). */
export function yieldToEventLoop(): Promise<void> {
  const g = globalThis as { setImmediate?: (f: () => void) => void }
  return new Promise((resolve) => (g.setImmediate ? g.setImmediate(resolve) : setTimeout(resolve, 0)))
}

/** The preview of a report from the stability sums over PREVIEW_SIDE x PREVIEW_SIDE blocks: block means, scaled so the largest is 1. */
export function previewOf(blockSums: Float64Array, n: number, side = PREVIEW_SIDE): number[] {
  // block k spans the rows (and columns) with floor(y * side / n) = k
  const span = (k: number) => Math.ceil(((k + 1) * n) / side) - Math.ceil((k * n) / side)
  const means = [...blockSums].map((v, k) => v / (span(Math.floor(k / side)) * span(k % side) || 1))
  const peak = Math.max(...means) || 1
  return means.map((v) => Math.round((v / peak) * 1000) / 1000)
}

/**
 * Dreams every field of the engine; `modes` gives each field's mode ('none' leaves a field alone,
 * though it still steps with the others). Observation and settling are the same length for both
 * modes so that a batch stays in step. Returns one report per field; `report: false`, none, and the
 * books before and after and the edit's outcomes are not read (on the GPU: the one read they share).
 */
export async function dream(
  engine: Engine,
  modes: DreamMode | readonly (DreamMode | 'none')[],
  { report = true }: { report?: boolean } = {},
): Promise<DreamReport[]> {
  const n = engine.size
  const cells = n * n
  const perField = typeof modes === 'string' ? Array<DreamMode>(engine.fields).fill(modes) : [...modes]
  const { observe_steps, observe_samples, settle_steps } = DREAM_PARAMS.light
  // taken now, brought back with the books after (on the GPU a read fewer)
  const before = report ? engine.booksLater() : async () => []
  // the stability sums of |u| over the snapshots: a sum, not a mean, ranks the cells the same way
  await observeHeld(engine, observe_steps, observe_samples)
  const edits = perField.map((mode, f) => {
    if (mode === 'none') return null
    const { prune_percentile, prune_factor, amplify_percentile, amplify_factor, mutate_fraction, mutate_amplitude } = DREAM_PARAMS[mode]
    // keyed by the field's own steps (those it rested not counted), as its noise is
    const key = lowbias32(engine.seed ^ lowbias32(engine.step_count - engine.rested[f] + engine.draws[f]))
    return { prune_percentile, prune_factor, amplify_percentile, amplify_factor, mutate_fraction, mutate_amplitude, key }
  })
  const edited = await engine.dreamEdit(edits, MASK_SMOOTHING_PASSES, PREVIEW_SIDE, report)
  await engine.step(settle_steps)
  if (!report) return []
  // the books before, the edit's outcomes and the books after: on the GPU one read brings them all
  const later = engine.booksLater()
  const [books, outcomes, after] = [await before(), await edited(), await later()]
  return perField.map((mode, f) => ({
    mode,
    steps_observed: observe_steps,
    energy_before: books[f].energy,
    energy_after: after[f].energy,
    pruned_fraction: mode === 'none' ? 0 : outcomes[f].pruned / cells,
    amplified_fraction: mode === 'none' ? 0 : outcomes[f].amplified / cells,
    mutated_cells: outcomes[f].mutated,
    stability_preview: previewOf(outcomes[f].preview, n),
  }))
}
