// Dreaming consolidates the medium (docs/dream.md): observe stability (time-averaged |u| over a
// window), prune transients (damp cells below a stability percentile), amplify persistent structure,
// mutate (deep only: small kicks on stable cells), settle. Runs on any backend through the engine,
// on every field of a batch at once, each field in its own mode.
import type { DreamMode } from '../contracts/registry.js'
import type { Engine } from '../field/engine_api.js'
import { boxBlur } from '../field/blur.js'
import { lowbias32, xi } from '../field/noise.js'

export interface DreamParams {
  /** Steps over which stability is averaged, and how many snapshots of |u| that average takes. */
  observe_steps: number
  observe_samples: number
  /** Cells below this stability percentile (0..1) are transients: multiplied by prune_factor. */
  prune_percentile: number
  prune_factor: number
  /** Cells at or above this percentile are persistent structure: multiplied by amplify_factor. */
  amplify_percentile: number
  amplify_factor: number
  /** Share of the persistent cells that get a kick, and the kick's size relative to the peak |u|. */
  mutate_fraction: number
  mutate_amplitude: number
  /** Steps run after the edits, so the field settles before anyone reads it. */
  settle_steps: number
}

/** The two modes. Light trims; deep cuts harder, amplifies more, and mutates. */
export const DREAM_PARAMS: Record<DreamMode, DreamParams> = {
  light: { observe_steps: 200, observe_samples: 10, prune_percentile: 0.3, prune_factor: 0.5, amplify_percentile: 0.85, amplify_factor: 1.1, mutate_fraction: 0, mutate_amplitude: 0, settle_steps: 100 },
  deep: { observe_steps: 200, observe_samples: 10, prune_percentile: 0.5, prune_factor: 0.15, amplify_percentile: 0.8, amplify_factor: 1.2, mutate_fraction: 0.02, mutate_amplitude: 0.05, settle_steps: 100 },
}

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

/** Mean |u| of every field over `steps` steps, from `samples` snapshots spread evenly across them. */
export async function observeStability(engine: Engine, steps: number, samples: number): Promise<Float32Array> {
  const cells = engine.size * engine.size * engine.fields
  const sum = new Float32Array(cells)
  const stride = Math.max(1, Math.floor(steps / samples))
  let taken = 0
  for (let done = 0; done < steps; done += stride) {
    await engine.step(Math.min(stride, steps - done))
    const { u } = await engine.read()
    for (let i = 0; i < cells; i++) sum[i] += Math.abs(u[i])
    taken++
    // a macrotask turn: on the CPU backend every await above resolves at once, and timers (a
    // publisher, a server's other requests) would otherwise wait for the whole observation
    await yieldToEventLoop()
  }
  for (let i = 0; i < cells; i++) sum[i] /= taken || 1
  return sum
}

/** Box-blur passes applied to the edit mask. */
export const MASK_SMOOTHING_PASSES = 3

/**
 * A hard-edged mask puts steps into u, and a step is gradient energy: measured, a pruning mask on a
 * speckled stability map raised the energy it was meant to cut. Three 3 x 3 box blurs turn every
 * edge into a ramp a few cells wide.
 */
export function smoothMask(mask: Float32Array, n: number, fields: number, passes = MASK_SMOOTHING_PASSES): Float32Array {
  const out = new Float32Array(mask.length)
  for (let f = 0; f < fields; f++) out.set(boxBlur(mask.subarray(f * n * n, (f + 1) * n * n), n, passes), f * n * n)
  return out
}

/** Lets timers and I/O run (setImmediate in Node, a zero timeout in a browser). */
export function yieldToEventLoop(): Promise<void> {
  const g = globalThis as { setImmediate?: (f: () => void) => void }
  return new Promise((resolve) => (g.setImmediate ? g.setImmediate(resolve) : setTimeout(resolve, 0)))
}

/** The value below which `q` of the entries fall (nearest rank). */
export function percentile(values: Float32Array, q: number): number {
  const sorted = Float32Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(q * sorted.length)))]
}

export function preview(map: Float32Array, n: number, side = PREVIEW_SIDE): number[] {
  const out = new Array<number>(side * side).fill(0)
  const counts = new Array<number>(side * side).fill(0)
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const k = Math.floor((y * side) / n) * side + Math.floor((x * side) / n)
      out[k] += map[y * n + x]
      counts[k]++
    }
  }
  const means = out.map((v, k) => v / (counts[k] || 1))
  const peak = Math.max(...means) || 1
  return means.map((v) => Math.round((v / peak) * 1000) / 1000)
}

/**
 * Dreams every field of the engine; `modes` gives each field's mode ('none' leaves a field alone,
 * though it still steps with the others). Observation and settling are the same length for both
 * modes so that a batch stays in step. Returns one report per field.
 */
export async function dream(engine: Engine, modes: DreamMode | readonly (DreamMode | 'none')[]): Promise<DreamReport[]> {
  const n = engine.size
  const cells = n * n
  const perField = typeof modes === 'string' ? Array<DreamMode>(engine.fields).fill(modes) : [...modes]
  const { observe_steps, observe_samples, settle_steps } = DREAM_PARAMS.light
  const before = await engine.books()
  const stability = await observeStability(engine, observe_steps, observe_samples)
  const { u } = await engine.read()
  const mask = new Float32Array(cells * engine.fields).fill(1)
  const kicks = new Float32Array(cells * engine.fields)
  const reports = perField.map((mode, f) => {
    const map = stability.subarray(f * cells, (f + 1) * cells)
    const report = { mode, steps_observed: observe_steps, pruned_fraction: 0, amplified_fraction: 0, mutated_cells: 0, stability_preview: preview(map, n) }
    if (mode === 'none') return report
    const p = DREAM_PARAMS[mode]
    const low = percentile(map, p.prune_percentile)
    const high = percentile(map, p.amplify_percentile)
    let peak = 0
    for (let i = 0; i < cells; i++) peak = Math.max(peak, Math.abs(u[f * cells + i]))
    const key = lowbias32(engine.seed ^ lowbias32(engine.step_count + f))
    for (let i = 0; i < cells; i++) {
      const k = f * cells + i
      if (map[i] < low) {
        mask[k] = p.prune_factor
        report.pruned_fraction++
      } else if (map[i] >= high && high > 0) {
        mask[k] = p.amplify_factor
        report.amplified_fraction++
        // deterministic: a kick where the cell's hash falls under the mutation rate
        if (p.mutate_fraction > 0 && (xi(i, key) + 1) / 2 < p.mutate_fraction) {
          kicks[k] = p.mutate_amplitude * peak * xi(i, lowbias32(key))
          report.mutated_cells++
        }
      }
    }
    report.pruned_fraction /= cells
    report.amplified_fraction /= cells
    return report
  })
  await engine.scale(smoothMask(mask, n, engine.fields))
  for (let f = 0; f < engine.fields; f++) if (reports[f].mutated_cells) await engine.inject(kicks.subarray(f * cells, (f + 1) * cells), f)
  await engine.step(settle_steps)
  const after = await engine.books()
  return reports.map((r, f) => ({ ...r, energy_before: before[f].energy, energy_after: after[f].energy }))
}
