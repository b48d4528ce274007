// The station's medium: each track's standardised perception, projected to a 100 x 100 wavefront and
// written into the right hemisphere of a field, read back physically (docs/station.md "Selection").
import type { DreamMode } from '../contracts/registry.js'
import type { Engine } from '../field/engine_api.js'
import { xi } from '../field/noise.js'
// a score counts as recall's does: above NOISE_SIGMAS deviations of NULL_PATTERNS null scores, and FORGOTTEN_BELOW
import { FORGOTTEN_BELOW, NOISE_SIGMAS, NULL_PATTERNS } from '../recall/recall.js'
import type { Track } from '../contracts/station.js'
import type { Block } from './schedule.js'
import { pickNext, type Pick } from './selection.js'
import { at, PERCEPTION_LENGTH, project, WAVEFRONT_SIDE, type PerceptionFeature } from './perception.js'

/** Side of the medium: two 100-wide hemispheres. */
export const MEDIUM_SIZE = 2 * WAVEFRONT_SIDE
/** A near-lossless cavity (docs/materials.md): a library's traces stay for as long as the station runs. */
export const MEDIUM_MATERIAL = 'ideal_resonator'
/** Steps between two tracks' writes, so each trace has a moment of its own to be read at: traces
 * written at one moment share its reading (docs/recall.md). */
export const WRITE_SPACING = 20
/** Steps run after the library is written: the traces spread from the right hemisphere into the left. */
export const ECHO_STEPS = 200

type Mood = Block['mood']

/** Which standardised features each mood axis leans on, and which way (docs/station.md). */
const MOOD_AXES: Record<keyof Mood, [PerceptionFeature, number, number?, number?][]> = {
  energy: [
    ['rms_mean', 1],
    ['onset_density', 1],
    ['flux_mean', 1],
    ['tempo', 1],
  ],
  // mel bands 60..127 lie above about 3 kHz
  brightness: [
    ['centroid', 1],
    ['rolloff', 1],
    ['bandwidth', 1],
    ['mel_mean', 1, 60, 128],
  ],
  tension: [
    ['flatness', 1],
    ['zcr', 1],
    ['key_clarity', -1],
  ],
  // mel bands 3..23 are the low mids, about 100 to 600 Hz
  warmth: [
    ['mel_mean', 1, 3, 24],
    ['centroid', -1],
  ],
}

/** The direction of one mood axis in the standardised 296-space, of unit length. */
function axis(name: keyof Mood): Float64Array {
  const v = new Float64Array(PERCEPTION_LENGTH)
  for (const [feature, sign, from = 0, to = 1] of MOOD_AXES[name]) for (let i = from; i < to; i++) v[at(feature) + i] += sign
  const norm = Math.hypot(...v)
  return v.map((x) => x / norm)
}

/** A block's mood as a standardised perception: each axis's value 0..1 mapped to -1..1 along the
 * axis's direction (0.5 is no lean). An all-0.5 mood is the zero vector and has no direction. */
export function moodVector(mood: Mood): Float64Array {
  const v = new Float64Array(PERCEPTION_LENGTH)
  for (const name of Object.keys(MOOD_AXES) as (keyof Mood)[]) {
    const a = axis(name)
    for (let i = 0; i < v.length; i++) v[i] += 2 * (mood[name] - 0.5) * a[i]
  }
  return v
}

/** Where the wavefront lies: the right hemisphere, centred in height. */
const X0 = MEDIUM_SIZE - WAVEFRONT_SIDE
const Y0 = (MEDIUM_SIZE - WAVEFRONT_SIDE) / 2

/** A 100 x 100 wavefront placed in the right hemisphere of the medium. */
export function rightHemisphere(w: Float32Array): Float32Array {
  const out = new Float32Array(MEDIUM_SIZE * MEDIUM_SIZE)
  for (let y = 0; y < WAVEFRONT_SIDE; y++) out.set(w.subarray(y * WAVEFRONT_SIDE, (y + 1) * WAVEFRONT_SIDE), (Y0 + y) * MEDIUM_SIZE + X0)
  return out
}

export interface Trace {
  id: string
  /** the step at which its wavefront was written */
  step: number
  /** the length of the engine's history then: the edits kept after it are run back before it is read */
  mark: number
}

/** Scores of query wavefronts read at each trace's moment, with that moment's noise floor. */
export interface Reading {
  /** scores[trace][query]: the energy the query, written then at rest, shares with the live field now,
   * over the energy it would hold alone in a lossless medium (as recall scores a text) */
  scores: number[][]
  floor: number[]
}

export class StationMedium {
  readonly traces: Trace[] = []
  private readonly nulls: Float32Array[]
  /** the last dream's mode: after one the playlist walks the medium's clusters (a medium written afresh is awake) */
  dreamt: DreamMode | null = null

  constructor(
    readonly engine: Engine,
    /** the codebook's seed */
    readonly seed: number,
  ) {
    if (engine.size !== MEDIUM_SIZE) throw new Error(`the station's medium is ${MEDIUM_SIZE} x ${MEDIUM_SIZE}, got ${engine.size}`)
    // null queries: wavefronts of cell-by-cell noise, unit norm as every projection is; their scores
    // are what the field's clutter and noise give a pattern that was never written
    this.nulls = Array.from({ length: NULL_PATTERNS }, (_, k) => {
      const w = Float32Array.from({ length: WAVEFRONT_SIDE * WAVEFRONT_SIDE }, (_, i) => xi(i, seed ^ Math.imul(0x5bd1e995, k + 1)))
      const norm = Math.hypot(...w)
      return rightHemisphere(w.map((v) => v / norm))
    })
  }

  /** The wavefront of a standardised perception (or of a mood). */
  wavefront(z: ArrayLike<number>): Float32Array {
    return project(z, this.seed)
  }

  /** Writes a track's wavefront into the right hemisphere at rest, then lets the medium run
   * WRITE_SPACING steps. A track whose vector is zero (a library of one) is not written. */
  async write(id: string, z: Float64Array): Promise<void> {
    if (!z.some((v) => v !== 0)) return
    await this.engine.inject(rightHemisphere(this.wavefront(z)))
    this.traces.push({ id, step: this.engine.step_count, mark: this.engine.history.length })
    await this.engine.step(WRITE_SPACING)
  }

  /** The echo: steps after the library's writes, in which the traces spread into the left hemisphere. */
  async echo(): Promise<void> {
    await this.engine.step(ECHO_STEPS)
  }

  async dream(mode: DreamMode): Promise<void> {
    // its report is not used: nothing is read back for it
    await this.engine.dream(mode, { report: false })
    this.dreamt = mode
  }

  /**
   * Reads query wavefronts (100 x 100, right hemisphere) at every trace's moment from the live field
   * alone, by recall's reader (Engine.readAt, docs/recall.md): the state is run back through the
   * steps, dream edits and changes of constants since, and at each write moment the readout's energy
   * product with each query is its score. The null queries' RMS score there sets the floor.
   */
  async read(queries: readonly Float32Array[]): Promise<Reading> {
    const readings = await this.engine.readAt(queries.map(rightHemisphere), this.nulls, this.traces)
    return { scores: readings.map((r) => r.scores), floor: readings.map((r) => Math.max(NOISE_SIGMAS * r.sigma, FORGOTTEN_BELOW)) }
  }

  /**
   * For each query vector (a mood's, a track's: standardised perceptions), the traces whose moment it
   * reads beyond the floor, with their scores: above it, they resonate; below minus it, they oppose
   * it (a reading within the noise says nothing, and is left out). One sweep for all. A zero vector
   * has no wavefront and resonates with nothing.
   */
  async resonance(vectors: readonly Float64Array[]): Promise<Map<string, number>[]> {
    const live = vectors.map((v) => v.some((x) => x !== 0))
    const { scores, floor } = await this.read(vectors.filter((_, q) => live[q]).map((v) => this.wavefront(v)))
    let q = 0
    return vectors.map((_, i) => {
      const out = new Map<string, number>()
      if (!live[i]) return out
      this.traces.forEach((t, k) => {
        if (Math.abs(scores[k][q]) > floor[k]) out.set(t.id, scores[k][q])
      })
      q++
      return out
    })
  }

  /**
   * The medium's cluster topology: traces joined where each one's wavefront resonates with the other's
   * trace above the floor (both ways), grouped as connected components, largest first.
   */
  async clusters(vectors: ReadonlyMap<string, Float64Array>): Promise<string[][]> {
    const ids = this.traces.map((t) => t.id)
    const { scores, floor } = await this.read(ids.map((id) => this.wavefront(vectors.get(id)!)))
    const joined = (i: number, j: number) => scores[i][j] > floor[i] && scores[j][i] > floor[j]
    const group = ids.map((_, i) => i)
    const find = (i: number): number => (group[i] === i ? i : (group[i] = find(group[i])))
    for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < ids.length; j++) if (joined(i, j)) group[find(i)] = find(j)
    const out = new Map<number, string[]>()
    ids.forEach((id, i) => out.set(find(i), [...(out.get(find(i)) ?? []), id]))
    return [...out.values()].sort((a, b) => b.length - a.length)
  }

  /**
   * The next track. Awake, the allowed track whose trace resonates most with the block's mood. After
   * a dream the playlist walks the consolidated medium's clusters: the allowed track whose trace
   * co-resonates most with the wavefront of the track on air; when none the rules allow does (the
   * cluster is played out), the block's mood starts the next one. Recency decides when nothing resonates.
   */
  async next(
    tracks: readonly Track[],
    block: Block,
    history: readonly string[],
    noRepeat: number,
    vectors: ReadonlyMap<string, Float64Array>,
    onAir: string | null,
  ): Promise<Pick> {
    const current = onAir === null ? undefined : vectors.get(onAir)
    const [mood, co] = await this.resonance(this.dreamt && current ? [moodVector(block.mood), current] : [moodVector(block.mood)])
    if (co) {
      const walk = pickNext(tracks, block, history, noRepeat, { by: 'cluster', scores: co })
      if (walk.by === 'cluster') return walk
    }
    return pickNext(tracks, block, history, noRepeat, { by: 'mood', scores: mood })
  }
}
