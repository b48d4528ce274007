// Text to wavefront (DESIGN.md section 4). The blake3 extendable output of a string, read as
// little-endian u32 words, seeds signed Gaussian sources. A text's wavefront is an identity part
// seeded by the whole text plus one part per distinct lower-cased word, so texts that share words
// share structure. Version 1 of the encoding; the golden test pins it (engine/encode/text.test.ts).
import { createBLAKE3, type IHasher } from 'hash-wasm'
import { CrystalError } from '../errors.js'
import { addPulse, type Pulse } from './pulse.js'

export const ENCODING_VERSION = 1
/** Sources seeded by the whole text. */
export const IDENTITY_SOURCES = 24
/** Sources seeded by each distinct word. */
export const WORD_SOURCES = 4
/** Share of the wavefront's energy carried by the identity part (the words share the rest). */
export const IDENTITY_WEIGHT = 0.3
/** Domain separation: a one-word text's identity and its word part must not be the same stream. */
const IDENTITY_DOMAIN = 'resonant-crystal/identity/1\0'
const WORD_DOMAIN = 'resonant-crystal/word/1\0'
const WORDS_PER_SOURCE = 6
const MAX_TEXT_LENGTH = 100_000

const hashers = new Map<number, Promise<IHasher>>()

/** `count` u32 words of blake3's extendable output of `input`. */
export async function blake3Words(input: string, count: number): Promise<Uint32Array> {
  const bits = count * 32
  if (!hashers.has(bits)) hashers.set(bits, createBLAKE3(bits))
  const h = await hashers.get(bits)!
  h.init()
  h.update(input)
  const bytes = h.digest('binary')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return Uint32Array.from({ length: count }, (_, i) => view.getUint32(i * 4, true))
}

const unit = (w: number) => w / 2 ** 32

/** Sources read from a word stream: position, radius, sign, frequency, phase (six words each). */
export function sourcesFromWords(words: Uint32Array): Pulse[] {
  const out: Pulse[] = []
  for (let k = 0; k + WORDS_PER_SOURCE <= words.length; k += WORDS_PER_SOURCE) {
    out.push({
      x: 0.15 + 0.7 * unit(words[k]),
      y: 0.15 + 0.7 * unit(words[k + 1]),
      radius: 0.05 + 0.07 * unit(words[k + 2]),
      amplitude: words[k + 3] & 1 ? 1 : -1,
      frequency: 0.5 + 2 * unit(words[k + 4]),
      phase: 2 * Math.PI * unit(words[k + 5]),
    })
  }
  return out
}

/** Distinct lower-cased words (letters and digits, any script), in order of first appearance. */
export function wordsOf(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])]
}

export interface TextSources {
  identity: Pulse[]
  words: { word: string; sources: Pulse[] }[]
}

export async function textSources(text: string): Promise<TextSources> {
  if (typeof text !== 'string' || text.trim() === '') throw new CrystalError('bad_argument', 'text must be a non-empty string', { field: 'text' })
  if (text.length > MAX_TEXT_LENGTH) throw new CrystalError('bad_argument', `text is ${text.length} characters, over the limit of ${MAX_TEXT_LENGTH}`, { field: 'text' })
  const identity = sourcesFromWords(await blake3Words(IDENTITY_DOMAIN + text, IDENTITY_SOURCES * WORDS_PER_SOURCE))
  const words = await Promise.all(
    wordsOf(text).map(async (word) => ({ word, sources: sourcesFromWords(await blake3Words(WORD_DOMAIN + word, WORD_SOURCES * WORDS_PER_SOURCE)) })),
  )
  return { identity, words }
}

function render(sources: Pulse[], n: number): Float32Array {
  const out = new Float32Array(n * n)
  for (const s of sources) addPulse(out, n, s)
  return out
}

function rms(a: Float32Array): number {
  let s = 0
  for (const v of a) s += v * v
  return Math.sqrt(s / a.length) || 1
}

/**
 * The wavefront of `text` on an n x n field: IDENTITY_WEIGHT of the energy in the identity part and
 * the rest spread evenly over the word parts (each scaled to unit RMS first), then scaled so that the
 * peak is 1. write(text, importance) adds importance times this.
 */
export async function textWavefront(text: string, n: number): Promise<Float32Array> {
  const { identity, words } = await textSources(text)
  const out = new Float32Array(n * n)
  const id = render(identity, n)
  const idScale = Math.sqrt(words.length ? IDENTITY_WEIGHT : 1) / rms(id)
  for (let i = 0; i < out.length; i++) out[i] = id[i] * idScale
  for (const { sources } of words) {
    const w = render(sources, n)
    const scale = Math.sqrt((1 - IDENTITY_WEIGHT) / words.length) / rms(w)
    for (let i = 0; i < out.length; i++) out[i] += w[i] * scale
  }
  let peak = 0
  for (const v of out) peak = Math.max(peak, Math.abs(v))
  for (let i = 0; i < out.length; i++) out[i] /= peak || 1
  return out
}
