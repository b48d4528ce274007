// Perception's first measures (pure, any PCM): 12-bin chroma, tempo from the onset envelope's
// autocorrelation, and the seeded Gaussian codebook that projects a vector to a 100 x 100 wavefront.
import FFT from 'fft.js'
import { CrystalError } from '../errors.js'
import { lowbias32 } from '../field/noise.js'

/** Magnitude spectra of Hann-windowed frames (size a power of two). */
function spectra(x: Float32Array, size: number, hop: number): Float64Array[] {
  const fft = new FFT(size)
  const window = Float64Array.from({ length: size }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size))
  const frame = new Array<number>(size)
  const out = fft.createComplexArray() as number[]
  const frames: Float64Array[] = []
  for (let at = 0; at + size <= x.length; at += hop) {
    for (let i = 0; i < size; i++) frame[i] = x[at + i] * window[i]
    fft.realTransform(out, frame)
    const mag = new Float64Array(size / 2 + 1)
    for (let k = 0; k <= size / 2; k++) mag[k] = Math.hypot(out[2 * k], out[2 * k + 1])
    frames.push(mag)
  }
  return frames
}

/** Energy per pitch class, C first (C, C#, ..., A = 9, ..., B), scaled so the largest is 1; bins from
 * 55 Hz to 5 kHz, each given to its nearest equal-tempered pitch (A4 = 440 Hz). */
export function chroma(x: Float32Array, rate: number): number[] {
  const size = 8192 // 5.4 Hz bins at 44.1 kHz: a semitone apart already at 100 Hz
  const c = new Array<number>(12).fill(0)
  for (const mag of spectra(x, size, size / 2)) {
    for (let k = 1; k < mag.length; k++) {
      const f = (k * rate) / size
      if (f < 55 || f > 5000) continue
      const pc = (((Math.round(12 * Math.log2(f / 440)) + 9) % 12) + 12) % 12
      c[pc] += mag[k] * mag[k]
    }
  }
  const top = Math.max(...c)
  return top > 0 ? c.map((v) => v / top) : c
}

/** Tempo in BPM (60 to 180): the onset envelope (spectral flux of log magnitudes, 256-sample hop)
 * autocorrelated, the best lag refined by a parabola through its neighbours. The autocorrelation is
 * the biased one, so of a beat's lag and its double the beat wins. */
export function tempo(x: Float32Array, rate: number): number {
  const hop = 256
  const frames = spectra(x, 1024, hop)
  const env = new Float64Array(frames.length)
  for (let t = 1; t < frames.length; t++) {
    let flux = 0
    for (let k = 0; k < frames[t].length; k++) flux += Math.max(0, Math.log1p(100 * frames[t][k]) - Math.log1p(100 * frames[t - 1][k]))
    env[t] = flux
  }
  const mean = env.reduce((a, b) => a + b, 0) / env.length
  for (let t = 0; t < env.length; t++) env[t] -= mean
  const fps = rate / hop
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
  return (60 * fps) / (best + shift)
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
