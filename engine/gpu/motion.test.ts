// shaders/motion.wgsl (engine/gpu/motion.ts) against its CPU twins, fieldMotion and patchEnergy
// (engine/field/motion.ts), what the consciousness publisher reads of the live field, and downsample
// (engine/util/downsample.ts), what the Observatory shows of it; and an engine's fork, which copies a
// field into a quiet twin where the fields live. All read back only what is asked for.
import { afterEach, expect, test } from 'vitest'
import { cpuBackend, engineOn, gpuBackend, softwareGpu } from '../../testing/backends.js'
import { randomField } from '../../testing/fixtures.js'
import type { Engine } from '../field/engine.js'
import type { FieldBackend } from '../field/backend.js'
import { fieldMotion, patchEnergy } from '../field/motion.js'
import { downsample } from '../util/downsample.js'
import type { GpuFieldBackend } from './backend.js'

const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)
const open: Engine[] = []
afterEach(() => open.splice(0).forEach((e) => e.destroy()))

const FIELDS = 3
interface Pair {
  gpu: FieldBackend
  cpu: FieldBackend
  u: Float32Array
  prev: Float32Array
  /** the GPU backend's transfers */
  counts: GpuFieldBackend['transfers']
}

/** A GPU and a CPU backend at N = n holding the same three random fields (u from `seed`, u_prev from seed + 1), for `check`. */
async function onBoth(n: number, seed: number, check: (pair: Pair) => Promise<void>): Promise<void> {
  const [gpu, cpu] = [await gpuBackend(n, FIELDS), await cpuBackend(n, FIELDS)]
  try {
    const [u, prev] = [randomField(n, FIELDS, seed), randomField(n, FIELDS, seed + 1)]
    for (const b of [gpu, cpu]) await b.load(u, prev)
    await check({ gpu, cpu, u, prev, counts: (gpu as GpuFieldBackend).transfers })
  } finally {
    for (const b of [gpu, cpu]) b.destroy()
  }
}

/** `take` of the GPU backend, in one read of exactly `floats` floats, and of the CPU backend. */
async function bothOnce<T>({ gpu, cpu, counts }: Pair, floats: number, take: (b: FieldBackend) => Promise<T>): Promise<[T, T]> {
  const before = counts.snapshot()
  const g = await take(gpu)
  const after = counts.snapshot()
  expect([after.reads - before.reads, after.bytes_read - before.bytes_read]).toEqual([1, floats * 4])
  return [g, await take(cpu)]
}

// N = 40: a field of 7 workgroups, the last part-full; N = 70: chunks of 245 cells, not 256; N = 600:
// more than the first pass's 64 workgroups would take a cell a lane (5,625 cells each)
test.each([40, 70, 600])(
  "a field's motion at N = %i: the GPU's sums within float32 round-off of the twin's float64, its cells' bits, one read of only those",
  {
    timeout: 120_000,
  },
  async (n) => {
    await onBoth(n, 5, async (pair) => {
      const { gpu, u, prev } = pair
      const cells = n * n
      const listed = [0, 1, n, cells - 1, Math.floor(cells / 2), 3 * n + 7]
      for (const field of [2, 0]) {
        const [g, c] = await bothOnce(pair, 2 + 2 * listed.length, (b) => b.motion(field, listed))
        // the CPU backend's is the twin's of the field given whole: its field, its cells
        const whole = fieldMotion(u.subarray(field * cells, (field + 1) * cells), prev.subarray(field * cells, (field + 1) * cells), listed)
        expect(c).toEqual(whole)
        expect(bits(g.u).equals(bits(c.u))).toBe(true)
        expect(bits(g.prev).equals(bits(c.prev))).toBe(true)
        expect(Math.abs(g.uu - c.uu)).toBeLessThanOrEqual(1e-6 * c.uu)
        expect(Math.abs(g.vv - c.vv)).toBeLessThanOrEqual(1e-6 * c.vv)
        // the control: another field's sums are not these (the kernel read the field asked for)
        const other = fieldMotion(u.subarray(cells, 2 * cells), prev.subarray(cells, 2 * cells), listed)
        expect(Math.abs(g.uu - other.uu)).toBeGreaterThan(1e-3 * c.uu)
      }
      // a field of rest: v = 0 exactly
      await gpu.load(u, u)
      expect((await gpu.motion(1, [5])).vv).toBe(0)
    })
  },
)

// N = 40 in 8 x 8 patches of 5 x 5 and 3 x 3 of 14 or 13 a side; N = 70, patches of 8 or 9; N = 600,
// 5,625 cells a patch; a cell a patch (16), one patch of two columns (17 in 16), one patch of all (64 in 1)
test.each([
  [40, 8],
  [40, 3],
  [70, 8],
  [600, 8],
  [16, 16],
  [17, 16],
  [64, 1],
])(
  "a field's energy by patches at N = %i, %i a side: the GPU's within float32 round-off of the twin's, one read of only those",
  {
    timeout: 120_000,
  },
  async (n, side) => {
    await onBoth(n, 7, async (pair) => {
      const { u, prev } = pair
      const cells = n * n
      for (const field of [2, 0]) {
        const [g, c] = await bothOnce(pair, side * side, (b) => b.patchEnergy(field, side))
        const own = u.subarray(field * cells, (field + 1) * cells)
        expect(c).toEqual(patchEnergy(own, n, side))
        expect(g).toHaveLength(side * side)
        // each patch within 1e-5 of itself, plus 1e-7 of the largest: a far patch's squares of a bump's
        // tail fall below float32's least number there and read 0 on the device
        const peak = Math.max(...c)
        g.forEach((e, p) => expect(Math.abs(e - c[p])).toBeLessThanOrEqual(1e-5 * c[p] + 1e-7 * peak))
        // the patches cover the field once: their sum is the motion's sum of u^2
        const whole = fieldMotion(own, prev.subarray(field * cells, (field + 1) * cells), []).uu
        expect(c.reduce((a, e) => a + e, 0) / whole).toBeCloseTo(1, 12)
        // the control: another field's patches are not these
        const other = patchEnergy(u.subarray(cells, 2 * cells), n, side)
        expect(g.some((e, p) => Math.abs(e - other[p]) > 1e-3 * peak)).toBe(true)
      }
    })
  },
)

// 40 at 8 a side: 5 x 5 boxes; 70 at 64 and 600 at 7: boxes of two sizes; 600 at 256: 65,536 boxes,
// 256 workgroups; 17 at 16 and 16 at 16 (a box a cell, the field as it is); 64 at 1: one box of all
test.each([
  [40, 8],
  [70, 64],
  [600, 7],
  [600, 256],
  [17, 16],
  [16, 16],
  [64, 1],
])(
  "a field downsampled at N = %i to %i a side: the GPU's the twin's bits on a software adapter (an ulp or two of the division elsewhere), one read of only those",
  {
    timeout: 120_000,
  },
  async (n, side) => {
    const software = await softwareGpu()
    await onBoth(n, 9, async (pair) => {
      const { u } = pair
      const cells = n * n
      for (const field of [2, 0]) {
        const [g, c] = await bothOnce(pair, side * side, (b) => b.downsampled(field, side))
        expect(c).toEqual(downsample(u.subarray(field * cells, (field + 1) * cells), n, side))
        if (software) expect(bits(g).equals(bits(c))).toBe(true)
        else g.forEach((v, k) => expect(Math.abs(v - c[k])).toBeLessThanOrEqual(3e-7 * Math.abs(c[k])))
        // the control: another field's boxes are not these
        const other = downsample(u.subarray(cells, 2 * cells), n, side)
        expect(g.some((v, k) => v !== other[k])).toBe(true)
      }
    })
  },
)

for (const backend of ['gpu', 'cpu'] as const)
  test(`a fork on the ${backend} holds the field asked for as it is now, at its step, and goes on as it would (noise off)${backend === 'gpu' ? '; nothing read back from the source' : ''}`, {
    timeout: 300_000,
  }, async () => {
    const source = await engineOn(backend, { size: 32, fields: 2, material: 'europium_crystal', temperature_k: 0, noise: 0, seed: 4 })
    open.push(source)
    await source.write('the river keeps its stones', 1, 1)
    await source.step(30)
    const reads = source.transfers()?.reads
    const fork = await source.fork(1)
    open.push(fork)
    // a copy on the device (read and loaded, it would read once)
    if (backend === 'gpu') expect(source.transfers()!.reads).toBe(reads)
    expect([fork.step_count, fork.memories.length, fork.timeline().length]).toEqual([30, 0, 0])
    const field = async (e: Engine, f: number) => e.read([f])
    const [a, b] = [await field(source, 1), await field(fork, 0)]
    expect(bits(b.u).equals(bits(a.u))).toBe(true)
    expect(bits(b.prev).equals(bits(a.prev))).toBe(true)
    // the control: field 0 (nothing written) is not what the fork holds
    expect((await field(source, 0)).u.some((v, i) => v !== b.u[i])).toBe(true)
    // its books start balanced, and both go on alike
    const books = await fork.books()
    expect(books[0].energy).toBeGreaterThan(0)
    expect(books[0].injected).toBeCloseTo(books[0].energy + books[0].saturation, 6)
    for (const e of [source, fork]) await e.step(25)
    const [c, d] = [await field(source, 1), await field(fork, 0)]
    expect(bits(d.u).equals(bits(c.u))).toBe(true)
    await expect(source.fork(2)).rejects.toThrow(/field/)
  })
