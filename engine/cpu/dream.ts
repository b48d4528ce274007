// The CPU twin of shaders/dream.wgsl: the same float32 arithmetic in the same order, over any
// backend's read and load. The CPU backend dreams through it; the GPU kernels are tested against it.
import { boxBlur } from '../field/blur.js'
import type { DreamOps, EditMask, EditOutcome, FieldBackend, FieldEdit } from '../field/backend.js'
import { lowbias32, xi } from '../field/noise.js'

const f = Math.fround

/** The sorted position the nearest-rank percentile q of `count` values picks. */
export function percentileRank(q: number, count: number): number {
  return Math.min(count - 1, Math.max(0, Math.floor(q * count)))
}

/** The value below which `q` of the entries fall (nearest rank); the GPU's radix select finds the same value. */
export function percentile(values: Float32Array, q: number): number {
  return Float32Array.from(values).sort()[percentileRank(q, values.length)]
}

/** acc += |u|, cell by cell (float32). */
export function accumulateAbs(acc: Float32Array, u: Float32Array): void {
  for (let i = 0; i < acc.length; i++) acc[i] = f(acc[i] + Math.abs(u[i]))
}

/** The sums of `taken` samples as their mean, in place (float32). */
export function meanOf(sums: Float32Array, taken: number): Float32Array {
  for (let i = 0; i < sums.length; i++) sums[i] /= taken || 1
  return sums
}

/** One field's mask (prune below `low`, amplify at or above `high`) and kicks, with the counts. */
export function editMask(map: Float32Array, low: number, high: number, peak: number, e: FieldEdit) {
  const mask = new Float32Array(map.length).fill(1)
  const kicks = new Float32Array(map.length)
  let pruned = 0
  let amplified = 0
  let mutated = 0
  const fraction = f(e.mutate_fraction)
  const size = f(f(e.mutate_amplitude) * peak)
  for (let i = 0; i < map.length; i++) {
    if (map[i] < low) {
      mask[i] = e.prune_factor
      pruned++
    } else if (map[i] >= high && high > 0) {
      mask[i] = e.amplify_factor
      amplified++
      // deterministic: a kick where the cell's hash falls under the mutation rate
      if (fraction > 0 && (xi(i, e.key) + 1) / 2 < fraction) {
        kicks[i] = f(size * xi(i, lowbias32(e.key)))
        mutated++
      }
    }
  }
  return { mask, kicks, pruned, amplified, mutated }
}

/** The fields whose masks an edit returns: the last `keep` of those edited (DreamOps.edit). */
export function keptEdits(edits: readonly (FieldEdit | null)[], keep: number): Set<number> {
  const edited = edits.flatMap((e, f) => (e ? [f] : []))
  return new Set(edited.slice(Math.max(0, edited.length - keep)))
}

/** Sums of `map` over side x side blocks: block (by, bx) holds the cells with floor(y side / n) = by, likewise x. */
export function blockSums(map: Float32Array, n: number, side: number): Float64Array {
  const out = new Float64Array(side * side)
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) out[Math.floor((y * side) / n) * side + Math.floor((x * side) / n)] += map[y * n + x]
  return out
}

/** The dream's operations over a backend's read and load (the CPU backend holds its fields in host memory). */
export class HostDreamOps implements DreamOps {
  private stability: Float32Array

  constructor(private readonly core: FieldBackend) {
    this.stability = new Float32Array(core.n * core.n * core.fields)
  }

  /** The stability sums as they are now (the recorder's twin reads them). */
  sums(): Float32Array {
    return this.stability
  }

  async stabilitySums(): Promise<Float32Array> {
    return this.stability.slice()
  }

  async accumulateStability(reset: boolean): Promise<void> {
    if (reset) this.stability.fill(0)
    accumulateAbs(this.stability, await this.core.readU())
  }

  async edit(
    edits: readonly (FieldEdit | null)[],
    passes: number,
    side: number,
    keep: number,
    report: boolean,
  ): Promise<{ outcomes: () => Promise<EditOutcome[]>; masks: (EditMask | null)[] }> {
    const { n } = this.core
    const kept = keptEdits(edits, keep)
    const cells = n * n
    const { u, prev } = await this.core.read()
    const outcomes: EditOutcome[] = []
    const masks: (EditMask | null)[] = []
    edits.forEach((e, field) => {
      const map = this.stability.subarray(field * cells, (field + 1) * cells)
      // without a report the preview is not made, as the GPU runs no preview kernel
      const preview = report ? blockSums(map, n, side) : new Float64Array(0)
      if (!e) {
        outcomes.push({ low: 0, high: 0, pruned: 0, amplified: 0, mutated: 0, preview })
        masks.push(null)
        return
      }
      const low = percentile(map, e.prune_percentile)
      const high = percentile(map, e.amplify_percentile)
      let peak = 0
      for (let i = 0; i < cells; i++) peak = Math.max(peak, Math.abs(u[field * cells + i]))
      const { mask, kicks, pruned, amplified, mutated } = editMask(map, low, high, peak, e)
      const smooth = boxBlur(mask, n, passes)
      for (let i = 0; i < cells; i++) {
        const k = field * cells + i
        u[k] = f(f(u[k] * smooth[i]) + kicks[i])
        prev[k] = f(f(prev[k] * smooth[i]) + kicks[i])
      }
      outcomes.push({ low, high, pruned, amplified, mutated, preview })
      masks.push(kept.has(field) ? smooth : null)
    })
    await this.core.load(u, prev)
    return { outcomes: async () => (report ? outcomes : []), masks }
  }
}
