// Loudness by ITU-R BS.1770-4 / EBU R128 (K-weighting, 400 ms blocks, absolute and relative gates),
// true peak by 4x oversampling, the gain that brings a track to the station's target, and a true-peak
// limiter so that a peaky track or voice reaches the target instead of stopping at the ceiling.

/** The station's loudness target (EBU R128 for streaming) and the true-peak ceiling. */
export const TARGET_LUFS = -16
export const CEILING_DBTP = -1

/** Biquad coefficients [b0, b1, b2, a1, a2] (a0 = 1). */
type Biquad = [number, number, number, number, number]

/** The two K-weighting stages for any sample rate, from the analog prototype that BS.1770's 48 kHz
 * coefficients come from (the constants are libebur128's; at 48 kHz they give the standard's table). */
function kWeighting(rate: number): [Biquad, Biquad] {
  let f0 = 1681.974450955533
  const G = 3.999843853973347
  let Q = 0.7071752369554196
  let K = Math.tan((Math.PI * f0) / rate)
  const Vh = 10 ** (G / 20)
  const Vb = Vh ** 0.4996667741545416
  let a0 = 1 + K / Q + K * K
  const shelf: Biquad = [
    (Vh + (Vb * K) / Q + K * K) / a0,
    (2 * (K * K - Vh)) / a0,
    (Vh - (Vb * K) / Q + K * K) / a0,
    (2 * (K * K - 1)) / a0,
    (1 - K / Q + K * K) / a0,
  ]
  f0 = 38.13547087602444
  Q = 0.5003270373238773
  K = Math.tan((Math.PI * f0) / rate)
  a0 = 1 + K / Q + K * K
  const highpass: Biquad = [1, -2, 1, (2 * (K * K - 1)) / a0, (1 - K / Q + K * K) / a0]
  return [shelf, highpass]
}

/** Sum of squares of the K-weighted signal per 100 ms step (the gating blocks are 4 steps). */
function weightedSquares(x: Float32Array, rate: number, step: number): Float64Array {
  const [s, h] = kWeighting(rate)
  const out = new Float64Array(Math.floor(x.length / step))
  let x1 = 0,
    x2 = 0,
    y1 = 0,
    y2 = 0,
    z1 = 0,
    z2 = 0
  for (let i = 0, k = 0; k < out.length; k++) {
    let acc = 0
    for (const end = i + step; i < end; i++) {
      const xi = x[i]
      const y = s[0] * xi + s[1] * x1 + s[2] * x2 - s[3] * y1 - s[4] * y2
      x2 = x1
      x1 = xi
      const z = h[0] * y + h[1] * y1 + h[2] * y2 - h[3] * z1 - h[4] * z2
      y2 = y1
      y1 = y
      z2 = z1
      z1 = z
      acc += z * z
    }
    out[k] = acc
  }
  return out
}

const lufs = (meanSquare: number): number => -0.691 + 10 * Math.log10(meanSquare)

/** Integrated loudness in LUFS of one or more channels (left and right weigh 1, as in BS.1770);
 * -Infinity when nothing passes the absolute gate (silence, or shorter than one 400 ms block). */
export function integratedLoudness(channels: readonly Float32Array[], rate: number): number {
  const step = Math.round(rate / 10)
  const squares = channels.map((c) => weightedSquares(c, rate, step))
  const steps = squares[0].length
  // 400 ms blocks, 75% overlap: block j covers steps j..j+3
  const blocks: number[] = []
  for (let j = 0; j + 4 <= steps; j++) {
    let z = 0
    for (const sq of squares) z += (sq[j] + sq[j + 1] + sq[j + 2] + sq[j + 3]) / (4 * step)
    blocks.push(z)
  }
  const gated = (threshold: number) => blocks.filter((z) => lufs(z) > threshold)
  const absolute = gated(-70)
  if (absolute.length === 0) return -Infinity
  const relative = lufs(absolute.reduce((a, b) => a + b, 0) / absolute.length) - 10
  const kept = gated(Math.max(-70, relative))
  return lufs(kept.reduce((a, b) => a + b, 0) / kept.length)
}

// 4x oversampling by a Hann-windowed sinc, 12 input taps per phase: within about 0.1 dB of the
// standard's 48-tap filter on program material, which is what a -1 dBTP ceiling needs.
const OVERSAMPLE = 4
const TAPS = 12
const PHASES: Float64Array[] = Array.from({ length: OVERSAMPLE - 1 }, (_, p) => {
  const frac = (p + 1) / OVERSAMPLE
  const h = new Float64Array(TAPS)
  for (let k = 0; k < TAPS; k++) {
    const t = k - TAPS / 2 + 1 - frac
    const sinc = t === 0 ? 1 : Math.sin(Math.PI * t) / (Math.PI * t)
    const w = 0.5 + 0.5 * Math.cos((Math.PI * t) / (TAPS / 2))
    h[k] = sinc * w
  }
  return h
})

/** The true peak near each sample: the largest magnitude of the sample and of the three 4x-oversampled
 * points after it, over all channels. Where the sample and the next are under `screen` the points
 * between them are not computed (as in truePeak: a band-limited signal does not rise 6 dB between samples). */
function peakEnvelope(channels: readonly Float32Array[], screen: number): Float32Array {
  const env = new Float32Array(channels[0].length)
  for (const x of channels) {
    for (let i = 0; i < x.length; i++) {
      let p = Math.abs(x[i])
      if (p < screen && (i + 1 >= x.length || Math.abs(x[i + 1]) < screen)) {
        if (p > env[i]) env[i] = p
        continue
      }
      for (const h of PHASES) {
        let v = 0
        for (let k = 0; k < TAPS; k++) {
          const j = i + k - TAPS / 2 + 1
          if (j >= 0 && j < x.length) v += h[k] * x[j]
        }
        p = Math.max(p, Math.abs(v))
      }
      if (p > env[i]) env[i] = p
    }
  }
  return env
}

/** Lookahead and release of the limiter: 2 ms lets the gain fall smoothly ahead of a peak (the
 * oversampling filter reaches 6 samples either side); 80 ms is a speech and music limiter's usual release. */
const LIMIT_LOOKAHEAD_S = 0.002
const LIMIT_RELEASE_S = 0.08

/** A lookahead true-peak limiter, in place: the gain each sample needs to keep the true peak within
 * `ceiling` dBTP is spread over the lookahead either side (a minimum filter), released with a
 * one-pole rise, and smoothed by a moving average no longer than the lookahead, so it never rises
 * above what a peak within reach needs. */
export function limitTruePeak(channels: Float32Array[], rate: number, ceiling = CEILING_DBTP): void {
  const limit = 10 ** (ceiling / 20)
  const env = peakEnvelope(channels, limit / 2)
  const n = env.length
  const L = Math.max(1, Math.round(LIMIT_LOOKAHEAD_S * rate))
  const need = Float32Array.from(env, (p) => (p > limit ? limit / p : 1))
  // minimum over [i - L, i + L], by a monotone deque
  const held = new Float32Array(n)
  const q: number[] = []
  for (let i = 0, head = 0; i < n + L; i++) {
    if (i < n) {
      while (q.length > head && need[q[q.length - 1]] >= need[i]) q.pop()
      q.push(i)
    }
    const c = i - L
    if (c < 0) continue
    while (q[head] < c - L) head++
    held[c] = need[q[head]]
  }
  // release: the gain rises back towards 1 no faster than the release allows
  const rise = 1 - Math.exp(-1 / (LIMIT_RELEASE_S * rate))
  for (let i = 1; i < n; i++) held[i] = Math.min(held[i], held[i - 1] + (1 - held[i - 1]) * rise)
  // a centred moving average over about L samples (the ends held): each value in it is at most what
  // any peak within L of its centre needs
  const half = Math.max(1, Math.floor(L / 2))
  const at = (j: number) => held[Math.min(n - 1, Math.max(0, j))]
  const gain = new Float32Array(n)
  let sum = 0
  for (let j = -half; j <= half; j++) sum += at(j)
  for (let i = 0; i < n; i++) {
    gain[i] = sum / (2 * half + 1)
    sum += at(i + half + 1) - at(i - half)
  }
  for (const x of channels) for (let i = 0; i < n; i++) x[i] *= gain[i]
}

/** True peak in dBTP: the highest magnitude of the 4x-oversampled signal over all channels. */
export function truePeak(channels: readonly Float32Array[]): number {
  let peak = 0
  for (const x of channels) for (let i = 0; i < x.length; i++) peak = Math.max(peak, Math.abs(x[i]))
  // a band-limited signal peaks between samples at most a few dB above its neighbours (3 dB for a
  // sine at a quarter of the rate), so only the stretches within 6 dB of the sample peak are oversampled
  const screen = peak / 2
  for (const x of channels) {
    for (let i = 0; i < x.length; i++) {
      if (Math.abs(x[i]) < screen && (i + 1 >= x.length || Math.abs(x[i + 1]) < screen)) continue
      for (const h of PHASES) {
        let v = 0
        for (let k = 0; k < TAPS; k++) {
          const j = i + k - TAPS / 2 + 1
          if (j >= 0 && j < x.length) v += h[k] * x[j]
        }
        if (Math.abs(v) > peak) peak = Math.abs(v)
      }
    }
  }
  return 20 * Math.log10(peak)
}

export interface Normalisation {
  /** what the track measured before */
  lufs_before: number
  true_peak_before: number
  /** the gain applied, in dB */
  gain_db: number
  /** true when the ceiling, not the target, set the gain (the track then plays below the target) */
  peak_limited: boolean
}

/** The gain that takes a track to `target` LUFS without its true peak passing `ceiling` dBTP. */
export function normalisingGain(
  channels: readonly Float32Array[],
  rate: number,
  target = TARGET_LUFS,
  ceiling = CEILING_DBTP,
): Normalisation {
  const before = integratedLoudness(channels, rate)
  const peak = truePeak(channels)
  if (!Number.isFinite(before)) return { lufs_before: before, true_peak_before: peak, gain_db: 0, peak_limited: false }
  const wanted = target - before
  const allowed = ceiling - peak
  return { lufs_before: before, true_peak_before: peak, gain_db: Math.min(wanted, allowed), peak_limited: allowed < wanted }
}

/** Rounds of limiter and gain: each leaves the peaks where they were and raises the rest, so a signal
 * whose loudness sits in its peaks (clicks on a quiet bed) takes a few. */
const ROUNDS = 6

/** Brings a track or a voice to `target` LUFS in place: the gain, then, where that takes its true peak
 * over `ceiling`, the limiter (a little under the ceiling, as its smoothing leaves a few hundredths of
 * a dB) and the gain again for what the limiter took, up to ROUNDS rounds. `peak_limited` says the
 * limiter worked; the loudness then ends within about 0.1 LU of the target. */
export function level(channels: Float32Array[], rate: number, target = TARGET_LUFS, ceiling = CEILING_DBTP): Normalisation {
  const n = normalisingGain(channels, rate, target, ceiling)
  if (!Number.isFinite(n.lufs_before)) return n
  let gain = target - n.lufs_before
  applyGain(channels, gain)
  let limited = false
  for (let round = 0; round < ROUNDS && truePeak(channels) > ceiling; round++) {
    limitTruePeak(channels, rate, ceiling - 0.1)
    limited = true
    const short = target - integratedLoudness(channels, rate)
    if (Math.abs(short) < 0.05) break
    applyGain(channels, short)
    gain += short
  }
  // whatever the rounds left, the ceiling holds
  if (truePeak(channels) > ceiling) limitTruePeak(channels, rate, ceiling - 0.1)
  return { ...n, gain_db: gain, peak_limited: limited }
}

/** Multiplies every channel in place by a gain given in dB. */
export function applyGain(channels: Float32Array[], gainDb: number): void {
  const g = 10 ** (gainDb / 20)
  for (const c of channels) for (let i = 0; i < c.length; i++) c[i] *= g
}
