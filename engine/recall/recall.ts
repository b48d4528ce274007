// Probe and recall (docs/recall.md). Both compare like with like in time. Probe evolves the text's
// wavefront forward through the same medium from the write times (exact, saturation included) and
// compares it with the live field. Recall ranks memories by relevance to the query (their wavefronts
// correlate) and presence: the live field run back through the adjoint of the step (linear part)
// and of every dream edit, read at the memory's write time. The mixes are versioned.
import type { Engine } from '../field/engine_api.js'
import { CrystalError } from '../errors.js'
import { textWavefront } from '../encode/text.js'
import { boxBlur } from '../field/blur.js'
import { stepParams } from '../field/params.js'
import { AdjointField } from './adjoint.js'

/** Side of the grid on which recall compares patterns (coarser than the field: speed and memory). */
export const RECALL_SIDE = 32
/** The documented mix of a recall score. */
export const RECALL_MIX = { version: 1, relevance: 0.75, presence: 0.25 } as const
/** The documented mix of a probe's resonance. */
export const PROBE_MIX = { version: 1, envelope: 0.5, phase: 0.5 } as const
/** Steps the adjoint runs back at most; older memories are read at that point. */
export const MAX_LOOKBACK = 5000
/** Write times a probe tries (the latest ones). */
export const PROBE_MOMENTS = 8

export interface ProbeResult {
  resonance: number
  /** Pearson correlation of the local energy envelopes (blurred u^2 and w^2): where, not how. */
  envelope: number
  /** Correlation of the field with the wavefront itself: sign and phase matter. */
  phase: number
}

export interface RecallHit {
  rank: number
  memory: number
  text: string
  importance: number
  step: number
  score: number
  relevance: number
  presence: number
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i] * b[i]
  return s
}

function unit(a: Float32Array): Float32Array {
  const norm = Math.sqrt(dot(a, a))
  return norm > 0 ? a.map((v) => v / norm) : a
}

function pearson(a: Float32Array, b: Float32Array): number {
  const ma = a.reduce((s, v) => s + v, 0) / a.length
  const mb = b.reduce((s, v) => s + v, 0) / b.length
  let ab = 0, aa = 0, bb = 0
  for (let i = 0; i < a.length; i++) {
    ab += (a[i] - ma) * (b[i] - mb)
    aa += (a[i] - ma) ** 2
    bb += (b[i] - mb) ** 2
  }
  return aa && bb ? ab / Math.sqrt(aa * bb) : 0
}

/** Box average of an n x n pattern onto side x side. */
export function downsample(u: Float32Array, n: number, side: number): Float32Array {
  if (n === side) return Float32Array.from(u)
  const out = new Float32Array(side * side)
  const counts = new Float32Array(side * side)
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const k = Math.floor((y * side) / n) * side + Math.floor((x * side) / n)
      out[k] += u[y * n + x]
      counts[k]++
    }
  }
  return out.map((v, k) => v / (counts[k] || 1))
}

function envelopeOf(u: Float32Array, n: number): Float32Array {
  return boxBlur(u.map((v) => v * v), n, 2)
}

/** A pattern made ready for resonance: unit length, and its energy envelope. */
export interface Prepared {
  unit: Float32Array
  envelope: Float32Array
}

export function prepare(pattern: Float32Array, n: number): Prepared {
  return { unit: unit(pattern), envelope: envelopeOf(pattern, n) }
}

/**
 * Resonance of a pattern with a readout of the field: the envelope (Pearson correlation of the
 * blurred squares: where the energy is) and the phase (plain correlation: sign and phase).
 */
export function resonanceOf(readout: Prepared, w: Prepared): ProbeResult {
  const phase = dot(readout.unit, w.unit)
  const envelope = pearson(readout.envelope, w.envelope)
  return { resonance: PROBE_MIX.envelope * envelope + PROBE_MIX.phase * Math.abs(phase), envelope, phase }
}

export function resonance(readout: Float32Array, w: Float32Array, n: number): ProbeResult {
  return resonanceOf(prepare(readout, n), prepare(w, n))
}

/** The memories' encodings on the recall grid, made once per memory and kept (memories only grow). */
export class MemoryIndex {
  private readonly encodings: Float32Array[] = []

  constructor(private readonly engine: Engine) {}

  private get side(): number {
    return Math.min(RECALL_SIDE, this.engine.size)
  }

  async sync(): Promise<Float32Array[]> {
    const memories = this.engine.memories
    for (let i = this.encodings.length; i < memories.length; i++) this.encodings.push(unit(await textWavefront(memories[i].text, this.side)))
    return this.encodings
  }

  /**
   * Runs the live field of `field` back through the adjoint of the steps and dream edits since, and
   * calls `visit` at each write event (newest first) with the readout at that moment: what a pattern
   * written then correlates with now. Readouts are n x n; visits at the same moment share one.
   */
  async sweep(field: number, visit: (readout: Float32Array, memory: number) => void): Promise<void> {
    const e = this.engine
    const { u } = await e.read([field])
    const adjoint = new AdjointField(stepParams({ n: e.size, fields: 1, material: e.material, temperature_k: e.temperature_k, noise: e.noise }), u)
    let t = e.step_count
    const oldest = e.step_count - MAX_LOOKBACK
    let readout: Float32Array | undefined
    for (let k = e.history.length - 1; k >= 0; k--) {
      const event = e.history[k]
      if (event.field !== field) continue
      while (t > Math.max(event.step, oldest)) {
        adjoint.step()
        t--
        readout = undefined
      }
      if (event.kind === 'scale') {
        if (t === event.step) adjoint.scale(event.mask)
        readout = undefined
      } else {
        readout ??= adjoint.readout()
        visit(readout, event.memory)
      }
    }
  }

  /** Presence of every memory of `field` (0 for the others): its encoding against the readout at its write time. */
  async presence(field: number): Promise<Float32Array> {
    const encodings = await this.sync()
    const presence = new Float32Array(encodings.length)
    let last: Float32Array | undefined
    let small: Float32Array | undefined
    await this.sweep(field, (readout, memory) => {
      if (readout !== last) small = unit(downsample(readout, this.engine.size, this.side))
      last = readout
      presence[memory] = dot(small!, encodings[memory])
    })
    return presence
  }

  /**
   * Probe: the text's wavefront, evolved forward through the same medium (saturation included, no
   * noise) from each of the latest PROBE_MOMENTS write times to now, with the dream edits since
   * replayed, against the live field; the best moment counts. One batch in a quiet twin engine.
   * With nothing written, the raw wavefront against the live field.
   */
  async probe(text: string, field: number): Promise<ProbeResult> {
    const e = this.engine
    const n = e.size
    const { u } = await e.read([field])
    const live = prepare(u, n)
    const oldest = e.step_count - MAX_LOOKBACK
    const events = e.history.filter((h) => h.field === field && h.step >= oldest)
    const moments = [...new Set(events.filter((h) => h.kind === 'write').map((h) => h.step))].slice(-PROBE_MOMENTS)
    const w = await textWavefront(text, n)
    if (!moments.length) return resonanceOf(live, prepare(w, n))
    // under saturation amplitude matters: a text that was written is evolved at its own importance
    const importance = [...e.memories].reverse().find((m) => m.text === text && m.field === field)?.importance ?? 1
    const twin = await e.twin(moments.length)
    try {
      const scales = events.filter((h) => h.kind === 'scale' && h.step >= moments[0])
      const wave = w.map((v) => v * importance)
      const stops = [...new Set([...moments, ...scales.map((h) => h.step)])].sort((a, b) => a - b)
      for (const t of stops) {
        await twin.step(t - moments[0] - twin.step_count)
        for (const [k, m] of moments.entries()) if (m === t) await twin.inject(wave, k)
        for (const h of scales) if (h.kind === 'scale' && h.step === t) await twin.scale(Float32Array.from({ length: n * n * moments.length }, (_, i) => h.mask[i % (n * n)]))
      }
      await twin.step(e.step_count - moments[0] - twin.step_count)
      const evolved = (await twin.read()).u
      let best: ProbeResult | undefined
      for (let k = 0; k < moments.length; k++) {
        const r = resonanceOf(live, prepare(evolved.subarray(k * n * n, (k + 1) * n * n), n))
        if (!best || r.resonance > best.resonance) best = r
      }
      return best!
    } finally {
      twin.destroy()
    }
  }

  async recall(text: string, k: number, field = 0): Promise<RecallHit[]> {
    if (!Number.isInteger(k) || k < 1 || k > 1000) throw new CrystalError('bad_argument', `k must be a whole number from 1 to 1000, got ${String(k)}`, { field: 'k' })
    const memories = this.engine.memories
    if (!memories.some((m) => m.field === field)) throw new CrystalError('not_found', 'the medium holds no memories yet; write something first', { field: 'text' })
    const query = unit(await textWavefront(text, this.side))
    const encodings = await this.sync()
    const presence = await this.presence(field)
    const hits: RecallHit[] = []
    memories.forEach((m, i) => {
      if (m.field !== field) return
      const relevance = dot(query, encodings[i])
      const score = RECALL_MIX.relevance * relevance + RECALL_MIX.presence * presence[i]
      hits.push({ rank: 0, memory: i, text: m.text, importance: m.importance, step: m.step, score, relevance, presence: presence[i] })
    })
    return hits
      .sort((a, b) => b.score - a.score || a.memory - b.memory)
      .slice(0, k)
      .map((h, r) => ({ ...h, rank: r + 1 }))
  }
}
