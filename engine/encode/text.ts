// Text to wavefront (DESIGN.md section 4, docs/recall.md). The blake3 extendable output of a string,
// read as little-endian u32 words, seeds signed Gaussian sources under a cell wide. A text's wavefront
// is an identity part seeded by the whole text plus one part per distinct lower-cased word, so texts
// that share words share structure. Version 2 (float64 Gaussians) is here; version 3 (integer blocks,
// order-independent) in text3.ts. Golden tests pin both (text.test.ts, text3.test.ts).
import { createBLAKE3, type IHasher } from 'hash-wasm'
import { CrystalError } from '../errors.js'
import type { Pulse } from './pulse.js'
import { type Text3, wavefront3 } from './text3.js'
import { BLAKE3_MAX_INPUT, blake3Into, type EncodeModule, encodeKernel, layout } from './wasm.js'

/** The encodings this build can write and read: a medium keeps the one its memories were written with. */
export type EncodingVersion = 2 | 3
/** The encoding new fields use. */
export const ENCODING_VERSION: EncodingVersion = 3
/**
 * Radius of every source in cells, not in fractions of the side: a pattern's independent modes (and
 * so the medium's capacity) then grow with N^2. At 0.6 cells the pattern's mean squared wavenumber
 * stays below that of cell-to-cell noise (docs/recall.md, "The encoding").
 */
export const SOURCE_RADIUS_CELLS = 0.6
/** Sources per part and per cell: 1,000 per part at N = 128 (the measured broadband encoding). */
export const SOURCES_PER_CELL = 1000 / (128 * 128)
/** Sources lie in [MARGIN, 1 - MARGIN] of the side, clear of the widest boundary sponge (6%). */
export const MARGIN = 0.08
/** Share of the wavefront's energy carried by the identity part (the words share the rest). */
export const IDENTITY_WEIGHT = 0.3
/**
 * Domain separation: a one-word text's identity and its word part must not be the same stream, nor
 * one version's stream another's. Version 2 reads three words a source (x, y, sign), version 3 two
 * (x, y; the sign is bit 0 of x).
 */
const STREAMS = {
  2: { identity: 'resonant-crystal/identity/2\0', word: 'resonant-crystal/word/2\0', wordsPerSource: 3 },
  3: { identity: 'resonant-crystal/identity/3\0', word: 'resonant-crystal/word/3\0', wordsPerSource: 2 },
} as const
const WORDS_PER_SOURCE = STREAMS[2].wordsPerSource
const MAX_TEXT_LENGTH = 100_000

const hashers = new Map<number, Promise<IHasher>>()
/** hash-wasm's BLAKE3 gives at most 2^17 bits of output a call (4,096 words): a stream's words an input. */
export const MAX_WORDS_PER_CALL = 4096

/** The input of a stream's words from 4,096 c on. */
export function streamInput(input: string, c: number): string {
  return c ? `${input}\0#${c}` : input
}

/**
 * The UTF-8 bytes of `input` where the encoding's kernels hash it (one blake3 chunk, and no lone
 * surrogate, which hash-wasm's UTF-8 encodes its own way); else undefined.
 */
export function oneChunk(input: string): Uint8Array | undefined {
  // UTF-8 takes at least one byte a UTF-16 unit
  if (input.length > BLAKE3_MAX_INPUT || /\p{Cs}/u.test(input)) return undefined
  const bytes = utf8.encode(input)
  return bytes.length <= BLAKE3_MAX_INPUT ? bytes : undefined
}

/**
 * `count` u32 words of blake3's extendable output of `input`. Beyond 4,096 words (sources for N over
 * about 180) the stream goes on with the output of `input + "\0#" + c` for c = 1, 2, ... Inputs of
 * one blake3 chunk (1,024 UTF-8 bytes) are hashed by the encoding's kernel, four output blocks at a
 * time, the others (and `via` 'hash-wasm', the test's control) by hash-wasm: the same words.
 */
export async function blake3Words(input: string, count: number, via: 'kernel' | 'hash-wasm' = 'kernel'): Promise<Uint32Array> {
  const out = new Uint32Array(count)
  // the kernel's words are read through a platform-endian view; a lone surrogate is left to hash-wasm's UTF-8
  const k = via === 'kernel' && LITTLE_ENDIAN ? await encodeKernel() : undefined
  for (let c = 0; c * MAX_WORDS_PER_CALL < count; c++) {
    const words = Math.min(MAX_WORDS_PER_CALL, count - c * MAX_WORDS_PER_CALL)
    const chunk = streamInput(input, c)
    const bytes = k && oneChunk(chunk)
    if (k && bytes) {
      blake3Into(k, bytes, words, out, c * MAX_WORDS_PER_CALL)
      continue
    }
    const bits = words * 32
    if (!hashers.has(bits)) hashers.set(bits, createBLAKE3(bits))
    const h = await hashers.get(bits)!
    h.init()
    h.update(chunk)
    const digest = h.digest('binary')
    if (LITTLE_ENDIAN && digest.byteOffset % 4 === 0)
      out.set(new Uint32Array(digest.buffer, digest.byteOffset, words), c * MAX_WORDS_PER_CALL)
    else {
      const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength)
      for (let i = 0; i < words; i++) out[c * MAX_WORDS_PER_CALL + i] = view.getUint32(i * 4, true)
    }
  }
  return out
}

const utf8 = new TextEncoder()

/** Whether a Uint32Array view reads bytes as little-endian words (every common platform). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

const unit = (w: number) => w / 2 ** 32

/** Sources per part on an n x n field. */
export function sourceCount(n: number): number {
  return Math.max(16, Math.round(SOURCES_PER_CELL * n * n))
}

/** Sources read from a word stream on an n x n field: position and sign (three words each). */
export function sourcesFromWords(words: Uint32Array, n: number): Pulse[] {
  const out: Pulse[] = []
  for (let k = 0; k + WORDS_PER_SOURCE <= words.length; k += WORDS_PER_SOURCE) {
    out.push({
      x: MARGIN + (1 - 2 * MARGIN) * unit(words[k]),
      y: MARGIN + (1 - 2 * MARGIN) * unit(words[k + 1]),
      radius: SOURCE_RADIUS_CELLS / n,
      amplitude: words[k + 2] & 1 ? 1 : -1,
      frequency: 0,
      phase: 0,
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

/** The sources of `text` on an n x n field in encoding version 2 (their number and radius follow n). */
export async function textSources(text: string, n: number): Promise<TextSources> {
  const [identity, ...parts] = await textStreams(text, n, 2)
  return {
    identity: sourcesFromWords(identity, n),
    words: wordsOf(text).map((word, i) => ({ word, sources: sourcesFromWords(parts[i], n) })),
  }
}

/** The word streams of `text` on an n x n field: the identity part's, then each distinct word's. */
export async function textStreams(text: string, n: number, version: EncodingVersion): Promise<Uint32Array[]> {
  const count = sourceCount(n) * STREAMS[version].wordsPerSource
  return Promise.all(streamInputs(text, version).map((input) => blake3Words(input, count)))
}

/** The inputs of `text`'s streams: the identity part's, then each distinct word's (a text is checked here). */
export function streamInputs(text: string, version: EncodingVersion): string[] {
  if (typeof text !== 'string' || text.trim() === '')
    throw new CrystalError('bad_argument', 'text must be a non-empty string', { field: 'text' })
  if (text.length > MAX_TEXT_LENGTH)
    throw new CrystalError('bad_argument', `text is ${text.length} characters, over the limit of ${MAX_TEXT_LENGTH}`, { field: 'text' })
  const domains = STREAMS[version]
  return [domains.identity + text, ...wordsOf(text).map((word) => domains.word + word)]
}

/**
 * The sources of a word stream (sourcesFromWords) summed into `out` (n x n, zeroed by the caller),
 * read straight from the words: addPulse's sum (frequency 0, so a plain Gaussian out to 3r) with
 * the Gaussian split into its x and y factors, ten exponentials a source instead of 25. The twin of
 * the WebAssembly render (engine/cpu/simd/assembly/encode.ts), which repeats it operation for operation.
 */
function render(words: Uint32Array, n: number, out: Float32Array): void {
  const gx = new Float64Array(8) // squared distances of the window's columns
  const ex = new Float64Array(8) // and their Gaussian factors
  const radius = SOURCE_RADIUS_CELLS / n
  const reach = 3 * radius
  const twoR2 = 2 * radius * radius
  for (let k = 0; k + WORDS_PER_SOURCE <= words.length; k += WORDS_PER_SOURCE) {
    const sx = MARGIN + (1 - 2 * MARGIN) * unit(words[k])
    const sy = MARGIN + (1 - 2 * MARGIN) * unit(words[k + 1])
    const amplitude = words[k + 2] & 1 ? 1 : -1
    const x0 = Math.max(0, Math.floor((sx - reach) * n))
    const x1 = Math.min(n - 1, Math.ceil((sx + reach) * n))
    const y0 = Math.max(0, Math.floor((sy - reach) * n))
    const y1 = Math.min(n - 1, Math.ceil((sy + reach) * n))
    for (let i = x0; i <= x1; i++) {
      gx[i - x0] = ((i + 0.5) / n - sx) ** 2
      ex[i - x0] = Math.exp(-gx[i - x0] / twoR2)
    }
    for (let j = y0; j <= y1; j++) {
      const dy2 = ((j + 0.5) / n - sy) ** 2
      const ey = amplitude * Math.exp(-dy2 / twoR2)
      for (let i = x0; i <= x1; i++) if (gx[i - x0] + dy2 <= reach * reach) out[j * n + i] += ey * ex[i - x0]
    }
  }
}

/**
 * Which code builds the wavefront: the WebAssembly kernel (the default, 4 to 20 times faster), or the
 * TypeScript twin it is tested against. Both give the same bits.
 */
export type EncodeKernel = 'wasm' | 'typescript'

export interface EncodeOptions {
  kernel?: EncodeKernel
  /** The encoding (ENCODING_VERSION unless given): a field's memories are all of one encoding. */
  version?: EncodingVersion
}

/** The passes of textWavefront over its two n x n buffers: `out` (the wavefront) and `part` (one word's). */
interface Passes {
  /** Renders a stream into out (first, on a zero field) or into part (zeroed first). */
  render(stream: Uint32Array, into: 'out' | 'part'): void
  sumSquares(of: 'out' | 'part'): number
  /** out = out * s */
  scale(s: number): void
  /** out = out + part * s */
  addPart(s: number): void
  peakAbs(): number
  /** out = out / d */
  divide(d: number): void
  result(): Float32Array
}

function typescriptPasses(n: number): Passes {
  const bufs = { out: new Float32Array(n * n), part: new Float32Array(n * n) }
  const { out, part } = bufs
  return {
    render(stream, into) {
      if (into === 'part') part.fill(0)
      render(stream, n, bufs[into])
    },
    sumSquares(of) {
      let s = 0
      for (const v of bufs[of]) s += v * v
      return s
    },
    scale(s) {
      for (let i = 0; i < out.length; i++) out[i] *= s
    },
    addPart(s) {
      for (let i = 0; i < out.length; i++) out[i] += part[i] * s
    },
    peakAbs() {
      let peak = 0
      for (let i = 0; i < out.length; i++) peak = Math.max(peak, Math.abs(out[i]))
      return peak
    },
    divide(d) {
      for (let i = 0; i < out.length; i++) out[i] /= d
    },
    result: () => out,
  }
}

function wasmPasses(k: EncodeModule, n: number, streamWords: number): Passes {
  const cells = n * n
  const padded = Math.ceil(cells / 4) * 4 // the SIMD passes take 4 cells at a time; the padding stays 0
  const at = layout(k, streamWords, n, padded)
  const f32 = (ptr: number) => new Float32Array(k.memory.buffer, ptr, padded)
  f32(at.out).fill(0)
  return {
    render(stream, into) {
      new Uint32Array(k.memory.buffer, at.stream, stream.length).set(stream)
      if (into === 'part') f32(at.part).fill(0)
      k.render(at.stream, stream.length, n, at[into], MARGIN, SOURCE_RADIUS_CELLS, at.scratch)
    },
    sumSquares: (of) => k.sumSquares(at[of], cells),
    scale: (s) => k.scale(at.out, padded, s, false),
    addPart: (s) => k.addScaled(at.out, at.part, padded, s),
    peakAbs: () => k.peakAbs(at.out, padded),
    divide: (d) => k.scale(at.out, padded, d, true),
    result: () => f32(at.out).slice(0, cells),
  }
}

/** Version 3's parts of `text`: their streams' inputs and each one's share of the energy (the identity's, then each word's equal share). */
export function textParts3(text: string, importance = 1): Text3 {
  const inputs = streamInputs(text, 3)
  const words = inputs.length - 1
  return { inputs, shares: inputs.map((_, p) => (p ? (1 - IDENTITY_WEIGHT) / words : words ? IDENTITY_WEIGHT : 1)), importance }
}

/**
 * The wavefront of `text` on an n x n field: IDENTITY_WEIGHT of the energy in the identity part and
 * the rest spread evenly over the word parts (each scaled to unit RMS first), then scaled so that the
 * peak is 1. write(text, importance) adds importance times this.
 */
export async function textWavefront(text: string, n: number, options: EncodeOptions = {}): Promise<Float32Array> {
  const { kernel = 'wasm', version = ENCODING_VERSION } = options
  if (version !== 2 && version !== 3)
    throw new CrystalError('bad_argument', `text encoding ${version} is not available in this build`, { field: 'encoding' })
  if (version === 3) {
    const { shares } = textParts3(text)
    return wavefront3(await textStreams(text, n, 3), n, shares, SOURCE_RADIUS_CELLS, kernel)
  }
  const [streams, module] = await Promise.all([textStreams(text, n, 2), kernel === 'wasm' ? encodeKernel() : undefined])
  // no await from here on: the kernel's one memory serves one text at a time
  const passes = module ? wasmPasses(module, n, streams[0].length) : typescriptPasses(n)
  const rms = (of: 'out' | 'part') => Math.sqrt(passes.sumSquares(of) / (n * n)) || 1
  const words = streams.length - 1
  passes.render(streams[0], 'out')
  passes.scale(Math.sqrt(words ? IDENTITY_WEIGHT : 1) / rms('out'))
  for (const stream of streams.slice(1)) {
    passes.render(stream, 'part')
    passes.addPart(Math.sqrt((1 - IDENTITY_WEIGHT) / words) / rms('part'))
  }
  passes.divide(passes.peakAbs() || 1)
  return passes.result()
}
