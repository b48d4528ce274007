// Probe and recall, read from the live field alone (DESIGN.md section 4, docs/recall.md). The live
// state is run back through the adjoint of the steps and dream edits since; at each write moment the
// readout gives, for any pattern written then, the energy inner product of its evolved self with the
// live field. A reading is that product over the energy the pattern would hold had it been written then
// at its importance in a lossless medium. Recall splits each moment's reading over the patterns written
// then (least squares): each memory's presence gives its strength, and the query's share through it,
// over that presence, its match. Chance is measured on null patterns read and split the same way.
import type { ProbeResult, RecallHit, RecallResult } from '../contracts/api.js'
import type { Engine, Moment, MomentReading } from '../field/engine_api.js'
import { CrystalError } from '../errors.js'
import { textWavefront } from '../encode/text.js'
import { keptPatternBytes, TextWave, type AdjointRunner, type KeptPatterns, type PatternWave, type SavedState } from '../field/backend.js'
import { stepParams, type StepParams } from '../field/params.js'
import { restEnergy } from './adjoint.js'
import { followPath, pathPlan, type PathRequest, type SaturationPath } from './path.js'
import { CpuAdjointRunner, onHost } from './runner.js'
import { ByteLru } from '../util/lru.js'
import { rms } from '../util/vector.js'

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
/** Numbers of moments' inverse Gram matrices kept between questions (8 bytes each). */
export const GRAM_CACHE_ENTRIES = 2 ** 23

/** A pattern and the energy it holds when written at rest (unit importance). */
interface Pattern {
  w: PatternWave
  readonly energy: number
}

/**
 * A pattern whose rest energy c^2 <w, Q w> the first sweep that reads it takes as a product reading
 * of its own (on the device where the sweep runs there: at N = 2048 the host took 80 ms a pattern,
 * 17 s for a first question over 200 memories); read before that, it is summed on the host.
 */
class RestPattern implements Pattern {
  private known: number | undefined
  constructor(
    readonly w: PatternWave,
    private readonly n: number,
    private readonly c2: number,
  ) {}

  get energy(): number {
    if (this.known === undefined && this.w instanceof TextWave)
      throw new CrystalError('internal', 'the rest energy of a pattern kept on a device is taken by the sweep that first reads it')
    this.known ??= restEnergy(this.w as Float32Array, this.n, this.c2)
    return this.known
  }

  /** Its energy is not known yet: a sweep reading it takes <Q w, w> too. */
  get pending(): boolean {
    return this.known === undefined
  }

  /** The sweep's <Q w, w>. */
  learn(product: number): void {
    this.known ??= this.c2 * product
  }
}

/** A moment to read, with the patterns read there only (the memories written then). */
interface SweepMoment extends Moment {
  own?: readonly Pattern[]
}

/** The shared patterns' scores at one moment, the null patterns' scores, the raw products <r, w> of its own patterns, and the nulls' RMS score. */
interface SweepReading extends MomentReading {
  nulls: number[]
  own: number[]
}

/**
 * Rest products a sweep takes beside its readings (static, the runner's `product`): <Q w_of, w> with
 * each pattern `with` lists (no c^2). The Gram entries recall splits by: between a question and a
 * moment's memories, among a moment's memories, and between the null patterns and a memory.
 */
interface ProductRequest {
  of: Pattern
  with: readonly Pattern[]
}

/** A sweep's readings, in the order of its moments, and its products: `product(of, w)` for any pair requested. */
interface Sweep {
  readings: SweepReading[]
  product: (of: Pattern, w: Pattern) => number
}

/** A memory's pattern, with the energy it shares with each null pattern (c^2 <w, Q w_null>), once a sweep has taken it. */
interface MemoryPattern extends Pattern {
  nulls?: Float64Array
}

/** The memories written at one moment with one text: one pattern in the field, their importances summed. */
interface Group {
  text: string
  importance: number
  memories: number[]
}

/** The writes of one field at one step (no edit between them): the field holds their sum. */
interface WriteMoment extends Moment {
  groups: Group[]
}

/** What a moment's reading says of its own memories, whatever the question. */
interface MomentSplit {
  /** Each group's presence c_g (the least-squares split of the reading). */
  c: number[]
  /** Each group's pattern's rest energy. */
  energy: number[]
  /** Each group's noise floor, NaN where no question can make it a hit (importance 0, or its strength under the floor). */
  floor: number[]
}

/** One field's moments and what recall read of them, while the field stands still (`key`). */
interface Analysis {
  key: readonly unknown[]
  moments: WriteMoment[]
  /** The null patterns' scores at each moment. */
  chance: number[][]
  splits: (MomentSplit | undefined)[]
}

/**
 * What a moment's patterns leave of a reading, given the energy each shares with the pattern read;
 * adding back memory g's part gives the share through g (at a moment of one memory, the reading).
 */
function left(m: WriteMoment, c: readonly number[], reading: number, energy: number, shared: (h: number) => number): number {
  return reading - m.groups.reduce((s, _h, h) => s + (c[h] * shared(h)) / energy, 0)
}

/** A state the history keeps, on the host: one kept on a device is followed there (the backend's adjoint), never here. */
function hostState(s: SavedState): Promise<{ u: Float32Array; prev: Float32Array }> {
  if (!('u' in s)) throw new CrystalError('bad_argument', 'a state kept on a device is followed on its backend')
  return Promise.resolve(s)
}

/** Null texts: control characters only, so no words, never typed, one identity stream each. */
export const nullText = (k: number) => '\u0001'.repeat(k + 1)

/** The inverse of a symmetric positive definite matrix (Gauss-Jordan with partial pivoting), j x j row-major. */
function invert(m: Float64Array, j: number): Float64Array {
  const a = Float64Array.from(m)
  const inv = new Float64Array(j * j)
  for (let i = 0; i < j; i++) inv[i * j + i] = 1
  for (let col = 0; col < j; col++) {
    let pivot = col
    for (let r = col + 1; r < j; r++) if (Math.abs(a[r * j + col]) > Math.abs(a[pivot * j + col])) pivot = r
    if (!(Math.abs(a[pivot * j + col]) > 0))
      throw new CrystalError('internal', 'two memories written at one moment have patterns the field cannot tell apart')
    for (const x of [a, inv]) for (let c = 0; c < j; c++) [x[col * j + c], x[pivot * j + c]] = [x[pivot * j + c], x[col * j + c]]
    const d = a[col * j + col]
    for (let c = 0; c < j; c++) {
      a[col * j + c] /= d
      inv[col * j + c] /= d
    }
    for (let r = 0; r < j; r++) {
      const f = a[r * j + col]
      if (r === col || f === 0) continue
      for (let c = 0; c < j; c++) {
        a[r * j + c] -= f * a[col * j + c]
        inv[r * j + c] -= f * inv[col * j + c]
      }
    }
  }
  return inv
}

/**
 * Opens the backward sweep of one field against `patterns`, for at most `readings` readings
 * (engine/recall/runner.ts); the patterns `kept` names are kept unchanged by the reader, so a
 * backend may keep them on its device.
 */
export type OpenAdjoint = (
  field: number,
  params: StepParams,
  patterns: readonly PatternWave[],
  readings: number,
  path: PathRequest | undefined,
  kept: KeptPatterns,
) => Promise<AdjointRunner>

export class MemoryReader {
  /** Written texts' wavefronts, kept from the write so that a memory is encoded once; by size, encoding and text. */
  private readonly waves = new ByteLru<string, Float32Array>(() => this.keptBytes)
  private readonly nulls = new Map<string, Promise<Pattern[]>>()
  /** Memories' patterns by text, made at the size and wave speed `patternsOf`. */
  private readonly patterns = new ByteLru<string, Promise<MemoryPattern>>(() => this.keptBytes)
  private patternsOf = ''
  /** The inverse Gram matrix of each moment's patterns, by size, wave speed and the moment's memories. */
  private readonly grams = new ByteLru<string, Float64Array>(() => 8 * GRAM_CACHE_ENTRIES)
  /** Each field's moments and splits, while it stands still. */
  private readonly kept = new Map<number, Analysis>()
  /** The last path recomputed on the host, kept while the field and its history stand still (questions come in runs). */
  private path?: { key: readonly unknown[]; path: Promise<SaturationPath> }

  /**
   * `open` runs the sweep where the field lives (the engine passes its backend's); by default the CPU
   * twin on the field read back. `cacheBytes`: the bytes of patterns each of the reader's caches (and
   * the backend's) keeps between questions, least recently used dropped first; by default
   * keptPatternBytes's rule. `textWaves`: in a field of encoding 3, a text's pattern is a `TextWave`,
   * made (or found, as the writes left it) where the sweep runs: the GPU's writes make their wavefronts
   * on the device and keep them there. Else the host makes it.
   */
  constructor(
    private readonly engine: Engine,
    private readonly open: OpenAdjoint = async (field, params, patterns, _readings, path) => {
      const { u, prev } = await engine.read([field])
      return new CpuAdjointRunner(params, u, prev, onHost(patterns), path && (await path.onHost()))
    },
    private readonly cacheBytes?: number,
    private readonly textWaves = false,
  ) {}

  /** The bound of each pattern cache at the field's size (4 bytes a cell a pattern). */
  get keptBytes(): number {
    return keptPatternBytes(4 * this.engine.size ** 2, this.cacheBytes)
  }

  /** The linear step's constants now (the noise is not linear and plays no part). */
  private get params(): StepParams {
    const e = this.engine
    return stepParams({ n: e.size, fields: 1, material: e.material, temperature_k: e.temperature_k, noise: 0 })
  }

  private get c2(): number {
    return this.params.c2
  }

  private ofWave(w: PatternWave): Pattern {
    return new RestPattern(w, this.engine.size, this.c2)
  }

  /** A text's wavefront in the field's own encoding: the one its memories were written with. */
  private async pattern(text: string): Promise<Pattern> {
    const { size: n, encoding } = this.engine
    if (encoding === 3 && this.textWaves) return this.ofWave(new TextWave(text))
    const kept = this.waves.get(`${n}/${encoding}/${text}`)
    return this.ofWave(kept ?? (await textWavefront(text, n, { version: encoding })))
  }

  /**
   * A text's wavefront as a write made it (a function of the text, the size and the field's encoding
   * alone), kept for recall.
   */
  written(text: string, wave: Float32Array): void {
    this.waves.set(`${Math.sqrt(wave.length)}/${this.engine.encoding}/${text}`, wave, wave.byteLength)
  }

  /** The size, wave speed and encoding patterns are made at (their energies and products depend on all three). */
  private get constants(): string {
    return `${this.engine.size}/${this.c2}/${this.engine.encoding}`
  }

  /**
   * A memory's pattern, kept for the next question (a field's memories are read at every recall).
   * `constants` is `this.constants`, taken once by the caller (a question may fetch thousands).
   */
  private memoryPattern(text: string, constants: string): Promise<MemoryPattern> {
    if (constants !== this.patternsOf) {
      this.patterns.clear()
      this.patternsOf = constants
    }
    const kept = this.patterns.get(text)
    if (kept !== undefined) return kept
    const pattern = this.pattern(text)
    this.patterns.set(text, pattern, 4 * this.engine.size ** 2)
    return pattern
  }

  private nullPatterns(): Promise<Pattern[]> {
    const key = this.constants
    if (!this.nulls.has(key)) this.nulls.set(key, Promise.all(Array.from({ length: NULL_PATTERNS }, (_, k) => this.pattern(nullText(k)))))
    return this.nulls.get(key)!
  }

  /**
   * The write moments of one field, oldest first: the writes at one step with no edit between them
   * share a moment (the field holds their sum), grouped by text.
   */
  private writeMoments(field: number): WriteMoment[] {
    const e = this.engine
    const out: WriteMoment[] = []
    let open: WriteMoment | undefined
    e.history.forEach((event, k) => {
      if (event.kind === 'scale' && event.field === field) open = undefined
      if (event.kind !== 'write' || event.field !== field) return
      if (open?.step !== event.step) out.push((open = { step: event.step, mark: k + 1, groups: [] }))
      open.mark = k + 1
      const m = e.memories[event.memory]
      const group = open.groups.find((g) => g.text === m.text)
      if (group) {
        group.importance += m.importance
        group.memories.push(event.memory)
      } else open.groups.push({ text: m.text, importance: m.importance, memories: [event.memory] })
    })
    return out
  }

  /**
   * Runs the live state of `field` back through the adjoint of the steps, dream edits and changes of
   * constants since, and reads the shared patterns and nulls at every moment (and each moment's own
   * patterns there only): one reading per moment, in the order given, scores at unit importance;
   * beside them, the rest products requested. Every pattern a request names but the shared ones is
   * one the reader keeps.
   */
  private async sweep(
    field: number,
    shared: readonly Pattern[],
    nulls: readonly Pattern[],
    moments: readonly SweepMoment[],
    nullsKept = true,
    products: readonly ProductRequest[] = [],
  ): Promise<Sweep> {
    const e = this.engine
    const oldest = e.step_count - MAX_LOOKBACK
    const key = [field, e.step_count, e.history.length, e.history.at(-1), e.material, e.temperature_k, e.noise]
    const plan = pathPlan(e, field, oldest)
    const onHost = () => {
      if (!this.path || this.path.key.some((k, i) => k !== key[i])) this.path = { key, path: followPath(plan!, e.size, hostState) }
      return this.path.path
    }
    const all = [...shared, ...nulls]
    const base = [...all.keys()]
    const firstOwn = moments.map((m) => all.push(...(m.own ?? [])) - (m.own?.length ?? 0))
    // the products' patterns, by identity: where they are listed already, else listed after the rest
    const index = new Map<PatternWave, number>()
    for (const [i, p] of all.entries()) if (!index.has(p.w)) index.set(p.w, i)
    const at = (p: Pattern) => index.get(p.w) ?? (index.set(p.w, all.push(p) - 1), all.length - 1)
    // one product reading per pattern `of`, with the union of what it is multiplied with; a pattern
    // whose energy is not known yet is multiplied with itself
    const requests = new Map<number, Set<number>>()
    const request = (of: number, w: number) => (requests.get(of) ?? requests.set(of, new Set()).get(of)!).add(w)
    for (const r of products) for (const p of r.with) request(at(r.of), at(p))
    const pending = all.filter((p): p is RestPattern => p instanceof RestPattern && p.pending)
    for (const p of pending) request(at(p), at(p))
    const runner = await this.open(
      field,
      this.params,
      all.map((p) => p.w),
      Math.max(1, moments.length) + requests.size,
      plan && { plan, onHost },
      // the question's patterns are read once; the null patterns (the reader's) and memories' own are kept
      { from: shared.length + (nullsKept ? 0 : nulls.length), bytes: this.keptBytes },
    )
    try {
      // the products are static: queued first, read back with the sweep's readings
      const productRows = new Map([...requests].map(([of, list]) => [of, runner.product(of, [...list])]))
      // the sweep is queued first (on the GPU nothing comes back), then every reading is scored
      const order = [...moments.keys()].sort((i, j) => moments[j].mark - moments[i].mark || moments[j].step - moments[i].step)
      const slots: number[] = []
      let t = e.step_count
      const back = (step: number) => {
        for (; t > Math.max(step, oldest); t--) runner.step(t - 1)
      }
      let next = 0
      for (let k = e.history.length - 1; k >= -1; k--) {
        // a moment is read once every event kept after it is run back
        for (; next < order.length && moments[order[next]].mark > k; next++) {
          const i = order[next]
          back(moments[i].step)
          slots[i] = runner.read([...base, ...(moments[i].own ?? []).map((_, j) => firstOwn[i] + j)])
        }
        if (k < 0) break
        const event = e.history[k]
        if (event.kind === 'conditions') {
          back(event.step)
          // the steps before this one ran under the constants in force then
          if (t === event.step) runner.setParams({ ...event.before, fields: 1 })
        } else if (event.kind === 'scale' && event.field === field) {
          back(event.step)
          if (t === event.step) runner.scale(event.mask)
        }
      }
      const values = await runner.results()
      const product = (of: Pattern, w: Pattern) => values[productRows.get(index.get(of.w)!)! * all.length + index.get(w.w)!]
      for (const p of pending) p.learn(product(p, p))
      const readings = moments.map((m, i) => {
        const row = values.subarray(slots[i] * all.length, (slots[i] + 1) * all.length)
        const sigma = rms(nulls.map((p, j) => row[shared.length + j] / p.energy))
        const scores = all.slice(0, shared.length + nulls.length).map((p, q) => row[q] / p.energy)
        return {
          scores: scores.slice(0, shared.length),
          nulls: scores.slice(shared.length),
          own: (m.own ?? []).map((_, j) => row[firstOwn[i] + j]),
          sigma,
        }
      })
      return { readings, product }
    } finally {
      runner.destroy()
    }
  }

  /** Any patterns at chosen moments, beside the caller's nulls (Engine.readAt). */
  async readAt(
    patterns: readonly Float32Array[],
    nulls: readonly Float32Array[],
    moments: readonly Moment[],
    field: number,
  ): Promise<MomentReading[]> {
    const e = this.engine
    for (const w of [...patterns, ...nulls])
      if (w.length !== e.size ** 2) throw new CrystalError('bad_argument', `a pattern read here has ${e.size ** 2} cells, got ${w.length}`)
    if (!nulls.length) throw new CrystalError('bad_argument', 'readAt needs null patterns to measure chance with')
    for (const m of moments)
      if (
        !Number.isInteger(m.step) ||
        m.step < 0 ||
        m.step > e.step_count ||
        !Number.isInteger(m.mark) ||
        m.mark < 0 ||
        m.mark > e.history.length
      )
        throw new CrystalError(
          'bad_argument',
          `a moment must lie in the field's past (step 0..${e.step_count}, mark 0..${e.history.length}), got step ${m.step}, mark ${m.mark}`,
        )
    const { readings } = await this.sweep(
      field,
      patterns.map((w) => this.ofWave(w)),
      nulls.map((w) => this.ofWave(w)),
      moments,
      false,
    )
    return readings.map(({ scores, sigma }) => ({ scores, sigma }))
  }

  /** The best score of the text's pattern over the write moments (DESIGN.md: like with like in time). */
  async probe(text: string, field: number): Promise<ProbeResult> {
    return (await this.probeMany([text], field))[0]
  }

  /** Probe of many texts in one sweep. */
  async probeMany(texts: readonly string[], field: number): Promise<ProbeResult[]> {
    const e = this.engine
    const patterns = await Promise.all(texts.map((t) => this.pattern(t)))
    const written: Moment[] = this.writeMoments(field)
    // nothing written: the present is read
    const moments = written.length ? written : [{ step: e.step_count, mark: e.history.length }]
    const { readings } = await this.sweep(field, patterns, await this.nullPatterns(), moments)
    return texts.map((_, q) => {
      const best = readings.reduce((b, r, i) => (r.scores[q] > readings[b].scores[q] ? i : b), readings.length - 1)
      const { scores, sigma } = readings[best]
      return {
        resonance: scores[q],
        step: written.length ? moments[best].step : null,
        noise_floor: Math.max(NOISE_SIGMAS * sigma, FORGOTTEN_BELOW),
      }
    })
  }

  async recall(text: string, k: number, field: number): Promise<RecallResult> {
    return (await this.recallMany([text], k, field))[0]
  }

  /**
   * The inverse Gram matrix of a moment's patterns (c^2 <w_g, Q w_h>), kept: a field's moments do not
   * change once written.
   */
  private gramInverse(moment: WriteMoment, own: readonly Pattern[], product: Sweep['product']): Float64Array {
    const j = own.length
    const gram = new Float64Array(j * j)
    own.forEach((p, g) => {
      for (let h = 0; h <= g; h++) gram[g * j + h] = gram[h * j + g] = this.c2 * product(p, own[h])
    })
    const inv = invert(gram, j)
    // at most GRAM_CACHE_ENTRIES numbers (a field of many moments of many writes), least recently used out first
    this.grams.set(this.gramKey(moment), inv, inv.byteLength)
    return inv
  }

  private gramKey(moment: WriteMoment): string {
    return `${this.constants}/${moment.groups.map((g) => g.memories.join(',')).join(';')}`
  }

  /**
   * The products a moment's split takes (in its sweep) that the reader has not kept: its memories'
   * with the null patterns, and its patterns among themselves where its inverse Gram matrix `kept`
   * is not at hand.
   */
  private splitRequests(mine: readonly MemoryPattern[], nulls: readonly Pattern[], kept?: Float64Array): ProductRequest[] {
    const missing = mine.filter((p) => !p.nulls)
    return [
      ...(missing.length ? nulls.map((n) => ({ of: n, with: missing })) : []),
      ...(mine.length > 1 && !kept ? mine.map((p, g) => ({ of: p, with: mine.slice(0, g + 1) })) : []),
    ]
  }

  /**
   * What each moment's reading says of its own memories whatever the question, kept while the field
   * stands still (its revision, history and constants): the null patterns' scores at every moment,
   * and each moment's split where it has been needed. A moment of several memories is split on the
   * first question; a moment of one only once a question's reading there could make a hit.
   */
  private async analysis(field: number): Promise<Analysis> {
    const e = this.engine
    const key = [field, e.revision, e.history.length, e.size, e.material, e.temperature_k, e.noise]
    const kept = this.kept.get(field)
    if (kept?.key.every((k, i) => k === key[i])) return kept
    const fresh: Analysis = { key, moments: this.writeMoments(field), chance: [], splits: [] }
    this.kept.set(field, fresh)
    return fresh
  }

  /**
   * A moment's split from its own patterns' raw readings `y` and the null patterns' scores there;
   * `kept`, its inverse Gram matrix where the reader had it, else made from the sweep's products.
   */
  private split(
    m: WriteMoment,
    mine: readonly MemoryPattern[],
    y: readonly number[],
    chance: readonly number[],
    nulls: readonly Pattern[],
    kept: Float64Array | undefined,
    product: Sweep['product'],
  ): MomentSplit {
    const j = m.groups.length
    for (const p of mine) p.nulls ??= Float64Array.from(nulls, (n) => this.c2 * product(n, p))
    const shared = (h: number, k: number) => mine[h].nulls![k]
    // each pattern's presence: the least-squares split of the reading over the moment's patterns
    const inv = j > 1 ? (kept ?? this.gramInverse(m, mine, product)) : Float64Array.of(1 / mine[0].energy)
    const c = m.groups.map((_, g) => {
      let s = 0
      for (let h = 0; h < j; h++) s += inv[g * j + h] * y[h]
      return s
    })
    // chance, read the same way on the null patterns
    const nullLeft = nulls.map((n, k) => left(m, c, chance[k], n.energy, (h) => shared(h, k)))
    const sigmaLeft = rms(nullLeft)
    const floor = m.groups.map((group, g) => {
      if (group.importance === 0) return Number.NaN
      const energy = mine[g].energy
      const strength = c[g] / group.importance
      const sigmaShare = rms(nulls.map((n, k) => nullLeft[k] + (c[g] * shared(g, k)) / n.energy))
      const noise_floor = Math.max(
        (NOISE_SIGMAS * Math.max(sigmaLeft * Math.sqrt(energy * inv[g * j + g]), sigmaShare)) / Math.abs(group.importance),
        FORGOTTEN_BELOW,
      )
      return strength > noise_floor ? noise_floor : Number.NaN
    })
    return { c, energy: mine.map((p) => p.energy), floor }
  }

  /** Recall of many texts in one sweep (benchmarks ask hundreds of questions of one field). */
  async recallMany(texts: readonly string[], k: number, field: number): Promise<RecallResult[]> {
    if (!Number.isInteger(k) || k < 1 || k > 1000)
      throw new CrystalError('bad_argument', `k must be a whole number from 1 to 1000, got ${String(k)}`, { field: 'k' })
    const e = this.engine
    const count = e.memories.filter((m) => m.field === field).length
    if (!count)
      return texts.map(() => ({
        hits: [],
        memories: 0,
        capacity: null,
        over_capacity: false,
        reason: 'the medium holds no memories yet; write something first',
      }))
    const patterns = await Promise.all(texts.map((t) => this.pattern(t)))
    const a = await this.analysis(field)
    const { moments, splits } = a
    const nulls = await this.nullPatterns()
    const first = !a.chance.length
    const constants = this.constants
    // an unsplit moment reads its own patterns in this sweep where it has several, or one already made (a
    // candidate of an earlier question: after a step it is read here, not in a second sweep)
    const unsplit = moments.map(
      (m, i) => !splits[i] && (m.groups.length > 1 || (constants === this.patternsOf && this.patterns.has(m.groups[0].text))),
    )
    const own = await Promise.all(
      moments.map((m, i) => (unsplit[i] ? Promise.all(m.groups.map((g) => this.memoryPattern(g.text, constants))) : undefined)),
    )
    // the question's share through a memory of a moment of several needs its rest products with the
    // moment's patterns: taken in the sweep where one there is held above its floor (or not split yet)
    const crossWith = await Promise.all(
      moments.map((m, i) =>
        m.groups.length > 1 && (unsplit[i] || splits[i]?.floor.some((f) => !Number.isNaN(f)))
          ? (own[i] ?? Promise.all(m.groups.map((g) => this.memoryPattern(g.text, constants))))
          : undefined,
      ),
    )
    const crossed = [...new Set(crossWith.flatMap((c) => c ?? []))]
    const grams = moments.map((m, i) => (own[i] && m.groups.length > 1 ? this.grams.get(this.gramKey(m)) : undefined))
    const { readings, product } = await this.sweep(
      field,
      patterns,
      first ? nulls : [],
      moments.map((m, i) => ({ ...m, own: own[i] })),
      true,
      [
        ...(crossed.length ? patterns.map((q) => ({ of: q, with: crossed })) : []),
        ...own.flatMap((mine, i) => (mine ? this.splitRequests(mine, nulls, grams[i]) : [])),
      ],
    )
    if (first) a.chance = readings.map((r) => r.nulls)
    moments.forEach((m, i) => {
      const mine = own[i]
      if (mine) splits[i] = this.split(m, mine, readings[i].own, a.chance[i], nulls, grams[i], product)
    })
    // a moment of one memory is split when a question's reading there clears the lowest floor a hit there can have
    const lone = moments.flatMap((m, i) => {
      if (splits[i] || m.groups[0].importance === 0) return []
      const imp = m.groups[0].importance
      const lowest = Math.max((NOISE_SIGMAS * rms(a.chance[i])) / Math.abs(imp), FORGOTTEN_BELOW) * (1 - 1e-9)
      return readings[i].scores.some((s) => s / imp > lowest) ? [i] : []
    })
    if (lone.length) {
      const mine = await Promise.all(lone.map((i) => this.memoryPattern(moments[i].groups[0].text, constants)))
      const back = await this.sweep(
        field,
        [],
        [],
        lone.map((i, l) => ({ ...moments[i], own: [mine[l]] })),
        true,
        this.splitRequests([...new Set(mine)], nulls),
      )
      for (const [l, i] of lone.entries())
        splits[i] = this.split(moments[i], [mine[l]], back.readings[l].own, a.chance[i], nulls, undefined, back.product)
    }
    // sigma^2 grows with the memories held (CAPACITY_SIGMAS); the newest reading has them all
    const newest = rms(a.chance.at(-1)!)
    const capacity = newest ? Math.floor(count / (CAPACITY_SIGMAS * newest) ** 2) : null
    const over_capacity = capacity !== null && count > capacity
    const c2 = this.c2
    const hits: RecallHit[][] = texts.map(() => [])
    for (const [i, m] of moments.entries()) {
      const sp = splits[i]
      // unsplit, or no memory there held above its floor: no hit at this moment
      if (!sp?.floor.some((f) => !Number.isNaN(f))) continue
      const { scores } = readings[i]
      const { c, energy: energies, floor } = sp
      const j = m.groups.length
      // the energy each query shares with the moment's patterns, c^2 <w_h, Q w_q>
      const cross = patterns.map((p) => (j > 1 ? crossWith[i]!.map((w) => c2 * product(p, w)) : []))
      const queryLeft = patterns.map((p, q) => (j > 1 ? left(m, c, scores[q], p.energy, (h) => cross[q][h]) : 0))
      m.groups.forEach((group, g) => {
        const noise_floor = floor[g]
        if (Number.isNaN(noise_floor)) return
        const energy = energies[g]
        const strength = c[g] / group.importance
        patterns.forEach((p, q) => {
          // the query's share through this memory
          const share = j > 1 ? queryLeft[q] + (c[g] * cross[q][g]) / p.energy : scores[q]
          if (!(share / group.importance > noise_floor)) return
          const match = (share * p.energy) / (c[g] * Math.sqrt(energy * p.energy))
          for (const memory of group.memories) {
            const { text, importance, step } = e.memories[memory]
            if (importance !== 0) hits[q].push({ rank: 0, memory, text, importance, step, match, strength, score: match, noise_floor })
          }
        })
      })
    }
    return hits.map((found) => {
      const ranked = found
        .sort((a, b) => b.match - a.match || b.strength - a.strength || a.memory - b.memory)
        .slice(0, k)
        .map((h, r) => ({ ...h, rank: r + 1 }))
      const reason = over_capacity
        ? `over capacity: the field holds ${count} memories but can tell apart about ${capacity} at N = ${e.size}; any ranking is a guess (use a larger field)`
        : ranked.length
          ? null
          : NOTHING_RESONATES
      return { hits: ranked, memories: count, capacity, over_capacity, reason }
    })
  }
}
