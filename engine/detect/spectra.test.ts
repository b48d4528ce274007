// A window's planes (engine/cpu/spectra.ts, the twin of shaders/spectra.wgsl; the kernel is tied to it
// in engine/discovery/record.test.ts) against the spectrum taken from the frames directly: the
// mean-removed, Hann-windowed DFT in float64 that detection read before the frames stayed on the device.
import { expect, test } from 'vitest'
import { spectraOf } from '../cpu/spectra.js'
import { giveBack, HeldPlanes, hashOf, ListIndex, reusedFloats, WindowSpectra } from './spectra.js'
import { rng } from '../util/rng.js'

const [N, T] = [6, 32]

function direct(series: number[], k: number): [number, number] {
  const mean = series.reduce((a, v) => a + v, 0) / T
  let [re, im] = [0, 0]
  series.forEach((v, t) => {
    const s = (v - mean) * (0.5 - 0.5 * Math.cos((2 * Math.PI * (t + 0.5)) / T))
    re += s * Math.cos((2 * Math.PI * k * t) / T)
    im -= s * Math.sin((2 * Math.PI * k * t) / T)
  })
  return [re, im]
}

test('the planes give every cell the windowed DFT of its series, the mean taken out, and its mean |u|', () => {
  const rand = rng(4)
  // an offset, a tone at a cell's own bin and phase, and noise: the offset must not leak into the bins
  const frames = Array.from({ length: T }, (_, t) =>
    Float32Array.from({ length: N * N }, (_, c) => 0.3 + Math.cos((2 * Math.PI * (1 + (c % 5)) * t) / T + c) + 0.1 * (rand() - 0.5)),
  )
  const spec = spectraOf({ n: N, dt: 4, frames })
  expect(spec.bins).toBe(T / 2)
  for (let c = 0; c < N * N; c++) {
    const series = frames.map((f) => f[c])
    // every bin's power (float32 sums: powerSumsOf, the GPU kernel's twin): |amplitude|^2
    const powers = spec.powerSums([c])
    for (let k = 1; k <= T / 2; k++) {
      const [re, im] = spec.amplitude(c, k)
      const [wr, wi] = direct(series, k)
      expect(Math.abs(re - wr)).toBeLessThan(1e-5)
      expect(Math.abs(im - wi)).toBeLessThan(1e-5)
      expect(Math.abs(powers[k - 1] - (re * re + im * im))).toBeLessThanOrEqual(1e-6 * Math.max(1, re * re + im * im))
    }
    // the tone's bin holds the most power
    const peak = Math.max(...powers)
    expect(powers.indexOf(peak)).toBe(c % 5)
    expect(spec.stability()[c]).toBeCloseTo(series.reduce((a, v) => a + Math.abs(v), 0) / T, 5)
  }
})

test("the stability map at some cells is the whole map's there, bit for bit, before and after the map is made: from frames (the CPU's) and from held sums (the GPU's), over 32 frames and 7", () => {
  const rand = rng(9)
  for (const count of [32, 7]) {
    const frames = Array.from({ length: count }, () => Float32Array.from({ length: N * N }, () => 3 * (rand() - 0.5)))
    const framed = () => spectraOf({ n: N, dt: 4, frames })
    const sums = Float32Array.from({ length: N * N }, (_, c) => frames.reduce((a, f) => a + Math.abs(f[c]), 0))
    const held = () => new WindowSpectra(N, 4, count, new HeldPlanes(0, sums))
    const cells = Array.from({ length: 40 }, () => Math.floor(rand() * N * N))
    for (const make of [framed, held]) {
      const at = make().stabilityAt(cells)
      const spec = make()
      const map = spec.stability()
      expect([...at]).toEqual(cells.map((c) => map[c]))
      expect([...spec.stabilityAt(cells)]).toEqual([...at])
    }
    // the control: each cell's mean in float64, the sum not rounded to float32 as the map's is, differs somewhere
    const at = held().stabilityAt(cells)
    expect(cells.some((c, k) => frames.reduce((a, f) => a + Math.abs(f[c]), 0) / count !== at[k])).toBe(true)
  }
})

test('floats given back are used again for a request of about their size, once, on shared memory', () => {
  const a = reusedFloats(1000)
  expect(a.buffer).toBeInstanceOf(SharedArrayBuffer)
  a.fill(7)
  giveBack(a)
  // within twice the request: the same memory, as it was left
  const b = reusedFloats(900)
  expect(b.buffer).toBe(a.buffer)
  expect([b.length, b[899]]).toEqual([900, 7])
  // taken once: the next request gets fresh memory
  expect(reusedFloats(900).buffer).not.toBe(a.buffer)
  giveBack(b)
  // a request under half of it, or over it, gets fresh memory; the given back stays for a fitting one
  expect(reusedFloats(400).buffer).not.toBe(a.buffer)
  expect(reusedFloats(2000).buffer).not.toBe(a.buffer)
  expect(reusedFloats(1000).buffer).toBe(a.buffer)
})

test('lists of cells are numbered by their contents, as a string of their cells numbers them (the control)', () => {
  const rand = rng(5)
  const index = new ListIndex()
  const control = new Map<string, number>()
  // short lists from few cells: many lists asked for again, as other arrays and as the same one
  const made: Int32Array[] = []
  for (let k = 0; k < 20_000; k++) {
    const again = made.length > 0 && rand() < 0.4
    const cells = again
      ? rand() < 0.5
        ? made[Math.floor(rand() * made.length)]
        : made[Math.floor(rand() * made.length)].slice()
      : Int32Array.from({ length: 1 + Math.floor(rand() * 6) }, () => Math.floor(rand() * 9))
    made.push(cells)
    const key = cells.join(',')
    if (!control.has(key)) control.set(key, control.size)
    expect(index.add(cells)).toBe(control.get(key))
    expect(index.get(Array.from(cells))).toBe(control.get(key))
  }
  expect(index.size).toBe(control.size)
  expect(control.size).toBeGreaterThan(1000)
  // the same cells in another order, or one more, are another list
  expect(index.get([8, 8, 8, 8, 8, 8, 8])).toBeUndefined()
  const [a, b] = [index.add([1, 2]), index.add([2, 1])]
  expect(a).not.toBe(b)
  // two lists of one hash (it reads 8 cells of a long list: here the second is not one), told apart by their cells
  const one = Array.from({ length: 20 }, (_, k) => 100 + k)
  const other = one.map((c, k) => (k === 1 ? 7 : c))
  expect(hashOf(one)).toBe(hashOf(other))
  expect(hashOf(one)).not.toBe(hashOf(one.map((c, k) => (k === 2 ? 7 : c))))
  const [first, second] = [index.add(one), index.add(other)]
  expect(second).not.toBe(first)
  expect([index.get([...one]), index.get([...other]), index.add([...other])]).toEqual([first, second, second])
})
