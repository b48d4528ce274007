// Perception against signals of known answer: a 440 Hz sine is pitch class A, clicks at 120 BPM read
// 120 +- 2 (and other tempi likewise), and the projection is deterministic, of unit norm and keeps angles.
import { describe, expect, test } from 'vitest'
import { chroma, project, tempo } from './perception.js'

const RATE = 44100
const sine = (f: number, seconds: number) => Float32Array.from({ length: RATE * seconds }, (_, i) => 0.3 * Math.sin((2 * Math.PI * f * i) / RATE))
function clicks(bpm: number, seconds: number): Float32Array {
  const x = new Float32Array(RATE * seconds)
  const period = (60 / bpm) * RATE
  let s = 7
  for (let beat = 0; beat * period < x.length; beat++) {
    const at = Math.round(beat * period)
    for (let i = 0; i < 220 && at + i < x.length; i++) x[at + i] = ((((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1) * (1 - i / 220)) * 0.8
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
    for (let i = 0; i < vectors.length; i++) for (let j = i + 1; j < vectors.length; j++) worst = Math.max(worst, Math.abs(cos(p[i], p[j]) - cos(vectors[i], vectors[j])))
    expect(worst).toBeLessThan(0.05)
    expect(cos(p[0], p[12])).toBeGreaterThan(0.8)
    expect(() => project(new Float64Array(296), 42)).toThrow(/zero vector/)
  })
})
