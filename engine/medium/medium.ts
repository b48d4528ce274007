// The persisted medium behind `crystal write` and `crystal ask` (docs/consciousness.md): the field's
// state (u and u_prev), the memories written into it, and a recall index of one INDEX_SIDE^2 int8
// encoding per memory, so that asking never re-renders what was written. Ranking uses the recall
// mix (RECALL_MIX): relevance to the query, and presence in the field as it is now.
import { textWavefront } from '../encode/text.js'
import { CrystalError } from '../errors.js'
import { downsample, RECALL_MIX, type RecallHit } from '../recall/recall.js'

export const MEDIUM_FORMAT = 'svc-crystal-medium/1'
/** Side of the recall index: 256 int8 values a memory, about 25 MB for 100,000 of them. */
export const INDEX_SIDE = 16

export interface MediumMemory {
  text: string
  importance: number
  step: number
}

export interface Medium {
  size: number
  material: string
  step_count: number
  memories: MediumMemory[]
  u: Float32Array
  prev: Float32Array
  /** INDEX_SIDE^2 values per memory, in memory order: unit-length encodings scaled to int8. */
  index: Int8Array
}

export function emptyMedium(size: number, material: string): Medium {
  return { size, material, step_count: 0, memories: [], u: new Float32Array(size * size), prev: new Float32Array(size * size), index: new Int8Array(0) }
}

function unit(a: Float32Array): Float32Array {
  let s = 0
  for (const v of a) s += v * v
  const norm = Math.sqrt(s) || 1
  return a.map((v) => v / norm)
}

/** A unit-length pattern as int8 (x 127): 4 times smaller than float32, correlations within about 1%. */
export function quantize(a: Float32Array): Int8Array {
  const u = unit(a)
  return Int8Array.from(u, (v) => Math.max(-127, Math.min(127, Math.round(v * 127))))
}

/**
 * Writes the texts into the medium: each wavefront (times its importance) is added to u and u_prev,
 * a displacement at rest, as the engine's inject does, and its encoding joins the index.
 */
export async function writeTexts(m: Medium, items: readonly { text: string; importance: number }[]): Promise<void> {
  const cells = m.size * m.size
  const index = new Int8Array(m.index.length + items.length * INDEX_SIDE * INDEX_SIDE)
  index.set(m.index)
  let at = m.index.length
  for (const { text, importance } of items) {
    const w = await textWavefront(text, m.size)
    for (let i = 0; i < cells; i++) {
      m.u[i] = Math.fround(m.u[i] + Math.fround(w[i] * importance))
      m.prev[i] = Math.fround(m.prev[i] + Math.fround(w[i] * importance))
    }
    index.set(quantize(downsample(w, m.size, Math.min(INDEX_SIDE, m.size))), at)
    at += INDEX_SIDE * INDEX_SIDE
    m.memories.push({ text, importance, step: m.step_count })
  }
  m.index = index
}

/** The k memories that best answer `text`: RECALL_MIX of relevance (index) and presence (the field now). */
export async function ask(m: Medium, text: string, k: number): Promise<RecallHit[]> {
  if (!Number.isInteger(k) || k < 1 || k > 1000) throw new CrystalError('bad_argument', `k must be a whole number from 1 to 1000, got ${String(k)}`, { field: 'k' })
  if (!m.memories.length) throw new CrystalError('not_found', 'the medium holds no memories yet; write something first (crystal write "text")', { field: 'text' })
  const side = Math.min(INDEX_SIDE, m.size)
  const cells = INDEX_SIDE * INDEX_SIDE
  const q = quantize(downsample(await textWavefront(text, m.size), m.size, side))
  const live = quantize(downsample(m.u, m.size, side))
  const scale = 1 / (127 * 127)
  const scores = new Float64Array(m.memories.length)
  const relevance = new Float64Array(m.memories.length)
  const presence = new Float64Array(m.memories.length)
  for (let j = 0; j < m.memories.length; j++) {
    let r = 0
    let p = 0
    const base = j * cells
    for (let i = 0; i < side * side; i++) {
      const e = m.index[base + i]
      r += q[i] * e
      p += live[i] * e
    }
    relevance[j] = r * scale
    presence[j] = p * scale
    scores[j] = RECALL_MIX.relevance * relevance[j] + RECALL_MIX.presence * presence[j]
  }
  // the top k without sorting everything
  const top: number[] = []
  for (let j = 0; j < scores.length; j++) {
    if (top.length < k || scores[j] > scores[top[top.length - 1]]) {
      top.push(j)
      top.sort((a, b) => scores[b] - scores[a] || a - b)
      if (top.length > k) top.pop()
    }
  }
  return top.map((j, r) => ({ rank: r + 1, memory: j, text: m.memories[j].text, importance: m.memories[j].importance, step: m.memories[j].step, score: scores[j], relevance: relevance[j], presence: presence[j] }))
}
