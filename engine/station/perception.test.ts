// Perception against signals of known answer: a 440 Hz sine is pitch class A, clicks at 120 BPM read
// 120 +- 2, the 296 numbers move as theory says, and the projection is deterministic, unit, angle-keeping.
import { describe, expect, test } from 'vitest'
import { at, chroma, libraryStatistics, PERCEPTION_LAYOUT, PERCEPTION_LENGTH, perceive, project, standardise, tempo } from './perception.js'

const RATE = 44100
const sine = (f: number, seconds: number) =>
  Float32Array.from({ length: RATE * seconds }, (_, i) => 0.3 * Math.sin((2 * Math.PI * f * i) / RATE))
function clicks(bpm: number, seconds: number): Float32Array {
  const x = new Float32Array(RATE * seconds)
  const period = (60 / bpm) * RATE
  let s = 7
  for (let beat = 0; beat * period < x.length; beat++) {
    const at = Math.round(beat * period)
    for (let i = 0; i < 220 && at + i < x.length; i++)
      x[at + i] = (((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1) * (1 - i / 220) * 0.8
  }
  return x
}
const NAMES = ['C', 'C#', 'D', 'Eb', 'E', 'F', 'F#', 'G', 'Ab', 'A', 'Bb', 'B']
const argmax = (v: number[]) => v.indexOf(Math.max(...v))

describe('perception', () => {
  test('a 440 Hz sine peaks at chroma A; 261.6 Hz at C; every other class far below', () => {
    const a = chroma(sine(440, 2), RATE)
    expect(NAMES[argmax(a)]).toBe('A')
    expect(Math.max(...a.filter((_, i) => i !== 9))).toBeLessThan(0.05)
    expect(NAMES[argmax(chroma(sine(261.63, 2), RATE))]).toBe('C')
  })

  test('clicks at 120 BPM read 120 +- 2; 90 and 140 BPM likewise (not their halves or doubles)', () => {
    expect(Math.abs(tempo(clicks(120, 12), RATE) - 120)).toBeLessThan(2)
    expect(Math.abs(tempo(clicks(90, 12), RATE) - 90)).toBeLessThan(2)
    expect(Math.abs(tempo(clicks(140, 12), RATE) - 140)).toBeLessThan(2)
  })

  test('the projection is deterministic per seed, of unit norm, and keeps cosines within 0.05', () => {
    let s = 1
    const rand = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1
    const vectors = Array.from({ length: 12 }, () => Float64Array.from({ length: 296 }, rand))
    // pairs at known angles too: a vector and a noisy copy of it
    vectors.push(Float64Array.from(vectors[0], (v) => v + 0.5 * rand()))
    const p = vectors.map((v) => project(v, 42))
    expect(Array.from(project(vectors[0], 42))).toEqual(Array.from(p[0]))
    expect(Array.from(project(vectors[0], 43))).not.toEqual(Array.from(p[0]))
    const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((acc, v, i) => acc + v * b[i], 0)
    const cos = (a: ArrayLike<number>, b: ArrayLike<number>) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b))
    let worst = 0
    for (const q of p) expect(Math.abs(dot(q, q) - 1)).toBeLessThan(1e-4)
    for (let i = 0; i < vectors.length; i++)
      for (let j = i + 1; j < vectors.length; j++) worst = Math.max(worst, Math.abs(cos(p[i], p[j]) - cos(vectors[i], vectors[j])))
    expect(worst).toBeLessThan(0.05)
    expect(cos(p[0], p[12])).toBeGreaterThan(0.8)
    expect(() => project(new Float64Array(296), 42)).toThrow(/zero vector/)
  })

  test('the 296-number layout: every index named once, in order', () => {
    let next = 0
    for (const [, from, length] of PERCEPTION_LAYOUT) {
      expect(from).toBe(next)
      next += length
    }
    expect(next).toBe(PERCEPTION_LENGTH)
    expect(PERCEPTION_LENGTH).toBe(296)
  })

  test('a louder copy moves the level features by its gain and leaves chroma, pitch, tempo and spectral shape alone', () => {
    const x = Float32Array.from(clicks(120, 6), (v, i) => v + 0.2 * Math.sin((2 * Math.PI * 330 * i) / RATE))
    const quiet = perceive(x, RATE)
    const loud = perceive(
      x.map((v) => 2 * v),
      RATE,
    )
    const gain = 20 * Math.log10(2) // 6.02 dB
    expect(loud[at('rms_mean')] - quiet[at('rms_mean')]).toBeCloseTo(gain, 2)
    expect(loud[at('rms_std')]).toBeCloseTo(quiet[at('rms_std')], 1)
    for (let b = 0; b < 128; b++)
      if (quiet[at('mel_mean') + b] > -60) expect(loud[at('mel_mean') + b] - quiet[at('mel_mean') + b]).toBeCloseTo(gain, 1)
    for (const name of ['centroid', 'bandwidth', 'rolloff', 'flatness', 'zcr', 'pitch', 'crest', 'key_clarity'] as const)
      expect(loud[at(name)], name).toBeCloseTo(quiet[at(name)], 3)
    for (let c = 0; c < 12; c++) expect(loud[at('chroma') + c]).toBeCloseTo(quiet[at('chroma') + c], 9)
    // the onset envelope compresses by log(1 + 100 |X|), so the tempo moves, though by little
    expect(Math.abs(loud[at('tempo')] - quiet[at('tempo')])).toBeLessThan(0.05)
  })

  test('white noise against a 440 Hz sine: flatness, zero crossings and centroid as theory gives them', () => {
    let s = 3
    const noise = Float32Array.from({ length: RATE * 3 }, () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1)
    const n = perceive(noise, RATE)
    const a = perceive(sine(440, 3), RATE)
    // exponentially distributed bin powers: geometric over arithmetic mean is e^-gamma = 0.561
    expect(n[at('flatness')]).toBeCloseTo(Math.exp(-0.5772), 1)
    expect(a[at('flatness')]).toBeLessThan(0.01)
    // a sine crosses zero twice a period; uncorrelated samples change sign half the time
    expect(a[at('zcr')]).toBeCloseTo((2 * 440) / RATE, 3)
    expect(n[at('zcr')]).toBeCloseTo(0.5, 1)
    // flat spectrum: the centroid sits at half of the Nyquist frequency; the sine's at its frequency
    expect(Math.abs(n[at('centroid')] - RATE / 4) / (RATE / 4)).toBeLessThan(0.02)
    expect(Math.abs(a[at('centroid')] - 440)).toBeLessThan(15)
    // the dominant pitch of the sine is A4 (0 octaves from 440 Hz)
    expect(Math.abs(a[at('pitch')])).toBeLessThan(0.005)
    expect(a[at('chroma') + 9]).toBe(1)
  })

  test('clicks at 120 BPM: tempo 120 +- 2 and two onsets a second in the vector', () => {
    const v = perceive(clicks(120, 10), RATE)
    expect(Math.abs(v[at('tempo')] - 120)).toBeLessThan(2)
    expect(Math.abs(v[at('onset_density')] - 2)).toBeLessThan(0.2)
    expect(v[at('beat_strength')]).toBeGreaterThan(0.3)
  })

  test("standardisation: each feature's z-scores over the library have mean 0 and deviation 1; constant features read 0", () => {
    const lib = [sine(220, 1), sine(440, 1), sine(880, 1), clicks(100, 1)].map((x) => perceive(x, RATE))
    const stats = libraryStatistics(lib)
    const z = lib.map((v) => standardise(v, stats))
    for (const i of [at('centroid'), at('rms_mean'), at('zcr'), at('mel_mean') + 10]) {
      const column = z.map((v) => v[i])
      expect(column.reduce((a, b) => a + b, 0)).toBeCloseTo(0, 9)
      expect(Math.sqrt(column.reduce((a, b) => a + b * b, 0) / column.length)).toBeCloseTo(1, 9)
    }
    const same = libraryStatistics([lib[0], lib[0]])
    expect(Array.from(standardise(lib[0], same)).every((v) => v === 0)).toBe(true)
  })
})
