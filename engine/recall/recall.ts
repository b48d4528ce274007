// Probe and recall, read from the live field alone (DESIGN.md section 4, docs/recall.md). The live
// state is run back through the adjoint of the steps and dream edits since; at each write moment the
// readout gives, for any pattern written then, the energy inner product of its evolved self with the
// live field. A score is that product over the energy the pattern would hold had it been written then
// at its importance in a lossless medium; chance is measured on null patterns read the same way.
import type { ProbeResult, RecallHit, RecallResult } from '../contracts/api.js'
import type { SavedState } from '../field/backend.js'
import type { Engine } from '../field/engine_api.js'
import { CrystalError } from '../errors.js'
import { textWavefront } from '../encode/text.js'
import type { AdjointRunner } from '../field/backend.js'
import { stepParams, type StepParams } from '../field/params.js'
import { restEnergy } from './adjoint.js'
import { followPath, pathPlan, type PathRequest, type SaturationPath } from './path.js'
import { CpuAdjointRunner } from './runner.js'

/** A score counts when it clears this many standard deviations of the null patterns' scores. */
export const NOISE_SIGMAS = 4
/** Null patterns read beside every query: wavefronts of texts that no one writes. */
export const NULL_PATTERNS = 16
/**
 * Capacity is estimated as M / (CAPACITY_SIGMAS sigma)^2: the number of memories at which a memory at
 * full strength stops standing CAPACITY_SIGMAS null sigmas clear. The null patterns share no words
 * with anything, while memories do share words by chance, so 4 sigma overestimated the measured 95%
 * top-1 capacity by 2.6 to 4.8x (`crystal bench memory`); 9 brings the estimate to 0.5 to 1x of it.
 */
export const CAPACITY_SIGMAS = 9
/** A memory holding less than this share of the energy it was written with counts as forgotten. */
export const FORGOTTEN_BELOW = 0.01
/** Steps the adjoint runs back at most (about 1 s of sweep at N = 128); older memories are read at that point and share its score. */
export const MAX_LOOKBACK = 20_000
export const NOTHING_RESONATES = 'nothing resonates above the noise floor'


/** Scores of the patterns read at one moment, and the RMS score of the null patterns there. */
interface Reading {
  step: number
  scores: number[]
  sigma: number
}

/** A pattern and the energy it holds when written at rest (unit importance). */
interface Pattern {
  w: Float32Array
  energy: number
}

/** A state the history keeps, on the host: one kept on a device is followed there (the backend's adjoint), never here. */
function hostState(s: SavedState): Promise<{ u: Float32Array; prev: Float32Array }> {
  if (!('u' in s)) throw new CrystalError('bad_argument', 'a state kept on a device is followed on its backend')
  return Promise.resolve(s)
}

/** Null texts: control characters only, so no words, never typed, one identity stream each. */
const nullText = (k: number) => '\u0001'.repeat(k + 1)

/** Opens the backward sweep of one field against `patterns`, for at most `readings` readings (engine/recall/runner.ts). */
export type OpenAdjoint = (field: number, params: StepParams, patterns: readonly Float32Array[], readings: number, path: PathRequest | undefined) => Promise<AdjointRunner>

export class MemoryReader {
  private readonly nulls = new Map<string, Promise<Pattern[]>>()
  /** The last path recomputed on the host, kept while the field and its history stand still (questions come in runs). */
  private path?: { key: readonly unknown[]; path: Promise<SaturationPath> }

  /**
   * `open` runs the sweep where the field lives (the engine passes its backend's); by default the CPU
   * twin on the field read back.
   */
  constructor(
    private readonly engine: Engine,
    private readonly open: OpenAdjoint = async (field, params, patterns, _readings, path) => {
      const { u, prev } = await engine.read([field])
      return new CpuAdjointRunner(params, u, prev, patterns, path && (await path.onHost()))
    },
  ) {}

  /** The linear step's constants now (the noise is not linear and plays no part). */
  private get params(): StepParams {
    const e = this.engine
    return stepParams({ n: e.size, fields: 1, material: e.material, temperature_k: e.temperature_k, noise: 0 })
  }

  private get c2(): number {
    return this.params.c2
  }

  private async pattern(text: string): Promise<Pattern> {
    const w = await textWavefront(text, this.engine.size)
    return { w, energy: restEnergy(w, this.engine.size, this.c2) }
  }

  private nullPatterns(): Promise<Pattern[]> {
    const key = `${this.engine.size}/${this.c2}`
    if (!this.nulls.has(key)) this.nulls.set(key, Promise.all(Array.from({ length: NULL_PATTERNS }, (_, k) => this.pattern(nullText(k)))))
    return this.nulls.get(key)!
  }

  /**
   * Runs the live state of `field` back through the adjoint of the steps and dream edits since and
   * reads the patterns at every write, newest first: `visit(reading, memory)` with each pattern's
   * score at unit importance and the null patterns' RMS score (writes at one moment share a reading).
   * With nothing written, one reading of the present (memory -1).
   */
  private async sweep(field: number, patterns: Pattern[], visit: (reading: Reading, memory: number) => void): Promise<void> {
    const e = this.engine
    const nulls = await this.nullPatterns()
    const oldest = e.step_count - MAX_LOOKBACK
    const key = [field, e.step_count, e.history.length, e.history.at(-1), e.material, e.temperature_k, e.noise]
    const plan = pathPlan(e, field, oldest)
    const onHost = () => {
      if (!this.path || this.path.key.some((k, i) => k !== key[i])) this.path = { key, path: followPath(plan!, e.size, hostState) }
      return this.path.path
    }
    const all = [...patterns, ...nulls]
    const writes = e.history.filter((h) => h.kind === 'write' && h.field === field).length
    const runner = await this.open(field, this.params, all.map((p) => p.w), writes + 1, plan && { plan, onHost })
    try {
      // the sweep is queued first (on the GPU nothing comes back), then every reading is scored
      const visits: { step: number; slot: number; memory: number }[] = []
      let t = e.step_count
      let slot: number | undefined
      for (let k = e.history.length - 1; k >= 0; k--) {
        const event = e.history[k]
        if (event.kind === 'state' || (event.kind !== 'conditions' && event.field !== field)) continue
        while (t > Math.max(event.step, oldest)) {
          t--
          runner.step(t)
          slot = undefined
        }
        if (event.kind === 'conditions') {
          // the steps before this one ran under the constants in force then
          if (t === event.step) runner.setParams({ ...event.before, fields: 1 })
        } else if (event.kind === 'scale') {
          if (t === event.step) runner.scale(event.mask)
          slot = undefined
        } else {
          slot ??= runner.read()
          visits.push({ step: t, slot, memory: event.memory })
        }
      }
      if (!visits.length) visits.push({ step: e.step_count, slot: runner.read(), memory: -1 })
      const values = await runner.results()
      const readings = new Map<number, Reading>()
      const reading = (step: number, slot: number): Reading => {
        const row = values.subarray(slot * all.length, (slot + 1) * all.length)
        const sigma = Math.sqrt(nulls.reduce((s, p, j) => s + (row[patterns.length + j] / p.energy) ** 2, 0) / nulls.length)
        return { step, scores: patterns.map((p, q) => row[q] / p.energy), sigma }
      }
      for (const v of visits) {
        if (!readings.has(v.slot)) readings.set(v.slot, reading(v.step, v.slot))
        visit(readings.get(v.slot)!, v.memory)
      }
    } finally {
      runner.destroy()
    }
  }

  /** The best score of the text's pattern over the write moments (DESIGN.md: like with like in time). */
  async probe(text: string, field: number): Promise<ProbeResult> {
    return (await this.probeMany([text], field))[0]
  }

  /** Probe of many texts in one sweep. */
  async probeMany(texts: readonly string[], field: number): Promise<ProbeResult[]> {
    const patterns = await Promise.all(texts.map((t) => this.pattern(t)))
    const best: (ProbeResult | undefined)[] = texts.map(() => undefined)
    await this.sweep(field, patterns, ({ step, scores, sigma }, memory) => {
      scores.forEach((score, q) => {
        if (!best[q] || score > best[q].resonance) best[q] = { resonance: score, step: memory >= 0 ? step : null, noise_floor: Math.max(NOISE_SIGMAS * sigma, FORGOTTEN_BELOW) }
      })
    })
    return best as ProbeResult[]
  }

  async recall(text: string, k: number, field: number): Promise<RecallResult> {
    return (await this.recallMany([text], k, field))[0]
  }

  /** Recall of many texts in one sweep (benchmarks ask hundreds of questions of one field). */
  async recallMany(texts: readonly string[], k: number, field: number): Promise<RecallResult[]> {
    if (!Number.isInteger(k) || k < 1 || k > 1000) throw new CrystalError('bad_argument', `k must be a whole number from 1 to 1000, got ${String(k)}`, { field: 'k' })
    const e = this.engine
    const patterns = await Promise.all(texts.map((t) => this.pattern(t)))
    const readings = new Map<number, Reading>()
    let newest: number | undefined
    await this.sweep(field, patterns, (reading, memory) => {
      readings.set(memory, reading)
      newest ??= reading.sigma
    })
    const mine = e.memories.map((m, i) => ({ m, i })).filter(({ m }) => m.field === field)
    if (!mine.length) return texts.map(() => ({ hits: [], memories: 0, capacity: null, over_capacity: false, reason: 'the medium holds no memories yet; write something first' }))
    // sigma^2 grows with the memories held (CAPACITY_SIGMAS)
    const capacity = newest ? Math.floor(mine.length / (CAPACITY_SIGMAS * newest) ** 2) : null
    const over_capacity = capacity !== null && mine.length > capacity
    return texts.map((_, q) => {
      const hits: RecallHit[] = []
      for (const { m, i } of mine) {
        if (m.importance === 0) continue
        const { scores, sigma } = readings.get(i)!
        const noise_floor = Math.max((NOISE_SIGMAS * sigma) / Math.abs(m.importance), FORGOTTEN_BELOW)
        const score = scores[q] / m.importance
        if (score > noise_floor) hits.push({ rank: 0, memory: i, text: m.text, importance: m.importance, step: m.step, score, noise_floor })
      }
      const ranked = hits.sort((a, b) => b.score - a.score || a.memory - b.memory).slice(0, k).map((h, r) => ({ ...h, rank: r + 1 }))
      const reason = over_capacity
        ? `over capacity: the field holds ${mine.length} memories but can tell apart about ${capacity} at N = ${e.size}; any ranking is a guess (use a larger field)`
        : ranked.length
          ? null
          : NOTHING_RESONATES
      return { hits: ranked, memories: mine.length, capacity, over_capacity, reason }
    })
  }
}
