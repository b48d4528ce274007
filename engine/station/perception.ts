// Perception (pure, any PCM): the documented 296-number vector (mel bands, MFCC, spectral shape, level,
// tempo, pitch, chroma, summary values), its standardisation, and the seeded codebook's projection.
import FFT from 'fft.js'
import { CrystalError } from '../errors.js'
import { lowbias32 } from '../field/noise.js'

/** Magnitude spectra of Hann-windowed frames (size a power of two). */
function spectra(x: Float32Array, size: number, hop: number): Float64Array[] {
  const fft = new FFT(size)
  const window = Float64Array.from({ length: size }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size))
  const frame = new Float64Array(size)
  const out = fft.createComplexArray() as number[]
  const frames: Float64Array[] = []
  for (let at = 0; at + size <= x.length; at += hop) {
    for (let i = 0; i < size; i++) frame[i] = x[at + i] * window[i]
    fft.realTransform(out, frame)
    const mag = new Float64Array(size / 2 + 1)
    for (let k = 0; k <= size / 2; k++) mag[k] = Math.sqrt(out[2 * k] * out[2 * k] + out[2 * k + 1] * out[2 * k + 1]) // Math.hypot is several times slower
    frames.push(mag)
  }
  return frames
}

/** The pitch classes in chroma's order. */
export const PITCH_CLASSES = ['C', 'C#', 'D', 'Eb', 'E', 'F', 'F#', 'G', 'Ab', 'A', 'Bb', 'B'] as const

/** 5.4 Hz bins at 44.1 kHz: a semitone apart already at 100 Hz. */
const CHROMA_SIZE = 8192

/** Energy per pitch class, C first (C, C#, ..., A = 9, ..., B), scaled so the largest is 1; bins from
 * 55 Hz to 5 kHz, each given to its nearest equal-tempered pitch (A4 = 440 Hz). */
export function chroma(x: Float32Array, rate: number): number[] {
  return chromaOf(spectra(x, CHROMA_SIZE, CHROMA_SIZE / 2), rate)
}

function chromaOf(frames: readonly Float64Array[], rate: number): number[] {
  const c = new Array<number>(12).fill(0)
  for (const mag of frames) {
    for (let k = 1; k < mag.length; k++) {
      const f = (k * rate) / CHROMA_SIZE
      if (f < 55 || f > 5000) continue
      const pc = (((Math.round(12 * Math.log2(f / 440)) + 9) % 12) + 12) % 12
      c[pc] += mag[k] * mag[k]
    }
  }
  const top = Math.max(...c)
  return top > 0 ? c.map((v) => v / top) : c
}

/** The onset envelope: spectral flux of log magnitudes, 1,024-point frames, 256-sample hop. */
function onsetEnvelope(x: Float32Array, rate: number): { env: Float64Array; fps: number } {
  const hop = 256
  const logs = spectra(x, 1024, hop).map((mag) => mag.map((m) => Math.log1p(100 * m)))
  const env = new Float64Array(logs.length)
  for (let t = 1; t < logs.length; t++) {
    let flux = 0
    for (let k = 0; k < logs[t].length; k++) flux += Math.max(0, logs[t][k] - logs[t - 1][k])
    env[t] = flux
  }
  return { env, fps: rate / hop }
}

/** Tempo in BPM (60 to 180) of an onset envelope, and the beat's strength: the autocorrelation at
 * the beat's lag over that at lag 0. */
function tempoOf(envelope: Float64Array, fps: number): { bpm: number; strength: number } {
  const mean = envelope.reduce((a, b) => a + b, 0) / envelope.length
  const env = envelope.map((v) => v - mean)
  const ac = (lag: number) => {
    let s = 0
    for (let t = lag; t < env.length; t++) s += env[t] * env[t - lag]
    return s
  }
  const lo = Math.floor((60 * fps) / 180)
  const hi = Math.ceil((60 * fps) / 60)
  let best = lo
  for (let lag = lo; lag <= hi; lag++) if (ac(lag) > ac(best)) best = lag
  const [a, b, c] = [ac(best - 1), ac(best), ac(best + 1)]
  const shift = a - 2 * b + c === 0 ? 0 : (0.5 * (a - c)) / (a - 2 * b + c)
  const zero = ac(0)
  return { bpm: (60 * fps) / (best + shift), strength: zero > 0 ? b / zero : 0 }
}

/** Tempo in BPM (60 to 180): the onset envelope autocorrelated, the best lag refined by a parabola
 * through its neighbours. The autocorrelation is the biased one, so of a beat's lag and its double
 * the beat wins. */
export function tempo(x: Float32Array, rate: number): number {
  const { env, fps } = onsetEnvelope(x, rate)
  return tempoOf(env, fps).bpm
}

/** Onsets per second: local maxima of the envelope (within 50 ms) that stand one deviation above its mean. */
function onsetDensity(env: Float64Array, fps: number): number {
  const mean = env.reduce((a, b) => a + b, 0) / env.length
  const sd = Math.sqrt(env.reduce((a, b) => a + (b - mean) ** 2, 0) / env.length)
  const w = Math.max(1, Math.round(0.05 * fps))
  let count = 0
  for (let t = 0; t < env.length; t++) {
    if (env[t] <= mean + sd) continue
    let peak = true
    for (let d = -w; d <= w && peak; d++) if (d && t + d >= 0 && t + d < env.length && env[t + d] > env[t]) peak = false
    if (peak) count++
  }
  return count / (env.length / fps)
}

/** The perception vector's layout (DESIGN.md section 12, docs/station.md): name, first index, length. */
export const PERCEPTION_LAYOUT = [
  ['mel_mean', 0, 128],
  ['mel_std', 128, 128],
  ['mfcc_mean', 256, 13],
  ['centroid', 269, 1],
  ['bandwidth', 270, 1],
  ['rolloff', 271, 1],
  ['flatness', 272, 1],
  ['zcr', 273, 1],
  ['rms_mean', 274, 1],
  ['rms_std', 275, 1],
  ['tempo', 276, 1],
  ['onset_density', 277, 1],
  ['pitch', 278, 1],
  ['chroma', 279, 12],
  ['crest', 291, 1],
  ['dynamic_range', 292, 1],
  ['flux_mean', 293, 1],
  ['beat_strength', 294, 1],
  ['key_clarity', 295, 1],
] as const
export type PerceptionFeature = (typeof PERCEPTION_LAYOUT)[number][0]
export const PERCEPTION_LENGTH = 296
/** Where a feature starts in the vector. */
export const at = (name: PerceptionFeature): number => PERCEPTION_LAYOUT.find(([n]) => n === name)![1]

const MEL_BANDS = 128
const MFCC = 13
/** Frames of the spectral features: 4,096 points (10.8 Hz bins at 44.1 kHz, so even the lowest mel
 * band holds a few bins), half overlapping. */
const FRAME_SIZE = 4096
/** Floor of every level in dB: -100 dB, so silence has a finite level. */
const FLOOR = 1e-10
const db = (power: number) => 10 * Math.log10(power + FLOOR)
const hzToMel = (f: number) => 2595 * Math.log10(1 + f / 700)
const melToHz = (m: number) => 700 * (10 ** (m / 2595) - 1)

/** Triangular filters on the HTK mel scale from 20 Hz to half the rate, of unit height. */
function melFilters(rate: number): { from: number; weights: Float64Array }[] {
  const lo = hzToMel(20)
  const hi = hzToMel(rate / 2)
  const edges = Array.from({ length: MEL_BANDS + 2 }, (_, i) => melToHz(lo + ((hi - lo) * i) / (MEL_BANDS + 1)))
  return Array.from({ length: MEL_BANDS }, (_, b) => {
    const [left, centre, right] = [edges[b], edges[b + 1], edges[b + 2]]
    const from = Math.ceil((left * FRAME_SIZE) / rate)
    const to = Math.floor((right * FRAME_SIZE) / rate)
    const weights = Float64Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => {
      const f = ((from + i) * rate) / FRAME_SIZE
      return Math.max(0, f <= centre ? (f - left) / (centre - left) : (right - f) / (right - centre))
    })
    return { from, weights }
  })
}

function mean(v: ArrayLike<number>): number {
  let s = 0
  for (let i = 0; i < v.length; i++) s += v[i]
  return s / (v.length || 1)
}
const deviation = (v: ArrayLike<number>) => {
  const m = mean(v)
  return Math.sqrt(mean(Array.from(v, (x) => (x - m) ** 2)))
}

/**
 * The 296-number perception vector of mono PCM (layout in PERCEPTION_LAYOUT, docs/station.md): mel
 * band levels (dB) and their deviations over time, MFCC means (orthonormal DCT-II of the mel levels),
 * spectral centroid, bandwidth and 85% rolloff (Hz) and flatness, zero crossings per sample, RMS
 * level (dB) and its deviation, tempo and onsets per second, the dominant pitch (octaves from A4),
 * chroma, and five summary values: crest factor (dB), dynamic range (95th minus 5th percentile of the
 * frame levels, dB), mean spectral flux, beat strength and key clarity (strongest pitch class over the mean).
 */
export function perceive(x: Float32Array, rate: number): Float64Array {
  if (x.length < FRAME_SIZE) throw new CrystalError('bad_audio', `perception needs at least ${FRAME_SIZE} samples, got ${x.length}`)
  const v = new Float64Array(PERCEPTION_LENGTH)
  const filters = melFilters(rate)
  const frames = spectra(x, FRAME_SIZE, FRAME_SIZE / 2)
  const mel = frames.map(() => new Float64Array(MEL_BANDS))
  const per = {
    centroid: [] as number[],
    bandwidth: [] as number[],
    rolloff: [] as number[],
    flatness: [] as number[],
    zcr: [] as number[],
    rms: [] as number[],
  }
  frames.forEach((mag, t) => {
    const power = mag.map((m) => m * m)
    filters.forEach(({ from, weights }, b) => {
      let e = 0
      for (let i = 0; i < weights.length; i++) e += weights[i] * power[from + i]
      mel[t][b] = db(e)
    })
    let total = 0
    let moment = 0
    let logs = 0
    for (let k = 1; k < power.length; k++) {
      total += power[k]
      moment += ((k * rate) / FRAME_SIZE) * power[k]
      logs += Math.log(power[k] + FLOOR)
    }
    const centroid = total > 0 ? moment / total : 0
    let spread = 0
    let cumulative = 0
    let rolloff = 0
    for (let k = 1; k < power.length; k++) {
      const f = (k * rate) / FRAME_SIZE
      spread += (f - centroid) ** 2 * power[k]
      if (cumulative < 0.85 * total) rolloff = f
      cumulative += power[k]
    }
    per.centroid.push(centroid)
    per.bandwidth.push(total > 0 ? Math.sqrt(spread / total) : 0)
    per.rolloff.push(rolloff)
    per.flatness.push(total > 0 ? Math.exp(logs / (power.length - 1)) / (total / (power.length - 1)) : 0)
    const start = t * (FRAME_SIZE / 2)
    let crossings = 0
    let squares = 0
    for (let i = start; i < start + FRAME_SIZE; i++) {
      squares += x[i] * x[i]
      if (i > start && x[i] >= 0 !== x[i - 1] >= 0) crossings++
    }
    per.zcr.push(crossings / FRAME_SIZE)
    per.rms.push(db(squares / FRAME_SIZE))
  })
  for (let b = 0; b < MEL_BANDS; b++) {
    const band = mel.map((m) => m[b])
    v[at('mel_mean') + b] = mean(band)
    v[at('mel_std') + b] = deviation(band)
  }
  // the DCT is linear, so the mean of the coefficients is the DCT of the mean levels
  for (let c = 0; c < MFCC; c++) {
    const scale = Math.sqrt((c === 0 ? 1 : 2) / MEL_BANDS)
    let sum = 0
    for (let b = 0; b < MEL_BANDS; b++) sum += v[at('mel_mean') + b] * Math.cos((Math.PI * c * (b + 0.5)) / MEL_BANDS)
    v[at('mfcc_mean') + c] = scale * sum
  }
  v[at('centroid')] = mean(per.centroid)
  v[at('bandwidth')] = mean(per.bandwidth)
  v[at('rolloff')] = mean(per.rolloff)
  v[at('flatness')] = mean(per.flatness)
  v[at('zcr')] = mean(per.zcr)
  v[at('rms_mean')] = mean(per.rms)
  v[at('rms_std')] = deviation(per.rms)
  const { env, fps } = onsetEnvelope(x, rate)
  const beat = tempoOf(env, fps)
  v[at('tempo')] = beat.bpm
  v[at('onset_density')] = onsetDensity(env, fps)
  const long = spectra(
    x.length >= CHROMA_SIZE ? x : Float32Array.from({ length: CHROMA_SIZE }, (_, i) => x[i] ?? 0),
    CHROMA_SIZE,
    CHROMA_SIZE / 2,
  )
  v[at('pitch')] = dominantPitch(long, rate)
  const c = chromaOf(long, rate)
  v.set(c, at('chroma'))
  let peak = 0
  let squares = 0
  for (const s of x) {
    peak = Math.max(peak, Math.abs(s))
    squares += s * s
  }
  v[at('crest')] = db(peak * peak) - db(squares / x.length)
  const levels = per.rms.slice().sort((a, b) => a - b)
  v[at('dynamic_range')] = levels[Math.floor(0.95 * (levels.length - 1))] - levels[Math.floor(0.05 * (levels.length - 1))]
  v[at('flux_mean')] = mean(env)
  v[at('beat_strength')] = beat.strength
  const cm = mean(c)
  v[at('key_clarity')] = cm > 0 ? 1 / cm : 0
  return v
}

/** The median over frames of the strongest peak from 55 Hz to 2 kHz, refined by a parabola through
 * its neighbours' log magnitudes, in octaves from A4 (0 = 440 Hz). */
function dominantPitch(frames: readonly Float64Array[], rate: number): number {
  const lo = Math.ceil((55 * CHROMA_SIZE) / rate)
  const hi = Math.floor((2000 * CHROMA_SIZE) / rate)
  const pitches = frames
    .map((mag) => {
      let k = lo
      for (let i = lo; i <= hi; i++) if (mag[i] > mag[k]) k = i
      if (mag[k] === 0) return null
      const [a, b, c] = [mag[k - 1], mag[k], mag[k + 1]].map((m) => Math.log(m + FLOOR))
      const shift = a - 2 * b + c === 0 ? 0 : (0.5 * (a - c)) / (a - 2 * b + c)
      return Math.log2(((k + shift) * rate) / CHROMA_SIZE / 440)
    })
    .filter((p): p is number => p !== null)
    .sort((a, b) => a - b)
  return pitches.length ? pitches[Math.floor(pitches.length / 2)] : 0
}

/** Per-feature statistics of a library (or any set of vectors): mean and standard deviation. */
export interface Standardisation {
  mean: Float64Array
  std: Float64Array
}

/** The per-feature mean and deviation over a library's vectors (docs/station.md: the statistics are the library's own). */
export function libraryStatistics(vectors: readonly Float64Array[]): Standardisation {
  const m = new Float64Array(PERCEPTION_LENGTH)
  const s = new Float64Array(PERCEPTION_LENGTH)
  for (let i = 0; i < PERCEPTION_LENGTH; i++) {
    m[i] = mean(vectors.map((v) => v[i]))
    s[i] = deviation(vectors.map((v) => v[i]))
  }
  return { mean: m, std: s }
}

/** z-scores by the library's statistics. A feature that does not vary over the library (a deviation
 * under 1e-9 of its scale) tells the tracks nothing apart and reads 0. */
export function standardise(v: Float64Array, stats: Standardisation): Float64Array {
  return v.map((x, i) => (stats.std[i] > 1e-9 * Math.max(1, Math.abs(stats.mean[i])) ? (x - stats.mean[i]) / stats.std[i] : 0))
}

/** The wavefront's side: 100 x 100 = 10,000 numbers. */
export const WAVEFRONT_SIDE = 100

const codebooks = new Map<string, Float32Array>()

/** Entry (i, j) of the seeded Gaussian codebook: Box-Muller over two counter-hash uniforms, so it
 * is the same on every platform and needs no generator state. */
function codebook(seed: number, inputs: number, outputs: number): Float32Array {
  const key = `${seed}:${inputs}:${outputs}`
  let g = codebooks.get(key)
  if (g) return g
  g = new Float32Array(inputs * outputs)
  const s = lowbias32(seed ^ 0x9e3779b9)
  for (let n = 0; n < g.length; n++) {
    const u1 = ((lowbias32((2 * n) ^ s) >>> 8) + 1) * 2 ** -24 // (0, 1]: log never sees 0
    const u2 = (lowbias32((2 * n + 1) ^ lowbias32(s)) >>> 8) * 2 ** -24
    g[n] = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2)
  }
  codebooks.set(key, g)
  return g
}

/** Projects a (standardised) vector to `outputs` numbers of unit norm by the seeded codebook. A random
 * Gaussian projection keeps angles (Johnson-Lindenstrauss): at 10,000 outputs a cosine moves by about
 * 0.01. The zero vector has no direction and is refused. */
export function project(v: ArrayLike<number>, seed: number, outputs = WAVEFRONT_SIDE * WAVEFRONT_SIDE): Float32Array {
  const g = codebook(seed, v.length, outputs)
  const out = new Float32Array(outputs)
  let norm = 0
  for (let j = 0; j < outputs; j++) {
    let s = 0
    const row = j * v.length
    for (let i = 0; i < v.length; i++) s += g[row + i] * v[i]
    out[j] = s
    norm += s * s
  }
  if (norm === 0) throw new CrystalError('bad_argument', 'cannot project the zero vector: it has no direction', { field: 'vector' })
  const k = 1 / Math.sqrt(norm)
  for (let j = 0; j < outputs; j++) out[j] *= k
  return out
}
