// shaders/kick.wgsl (engine/gpu/inject.ts encodeKick, encodeErase) against its CPU twins,
// WasmFieldBackend.kick and .erase and kickScale (engine/field/kick.ts): the perturbation's kick scaled
// to each listed field's rms of u where the fields live, as the twin scales it (bit for bit on a
// software adapter), with nothing read back; an engine's kick booked as an injection on either
// backend; and the erasure, the cells zeroed as a mask of 0 there would, only the cells sent up.
import { expect, test } from 'vitest'
import type { Engine } from '../field/engine.js'
import { cpuBackend, engineOn, gpuBackend, softwareGpu } from '../../testing/backends.js'
import { randomField } from '../../testing/fixtures.js'
import { kickScale } from '../field/kick.js'
import { rng } from '../util/rng.js'
import { rms } from '../util/vector.js'
import type { GpuFieldBackend } from './backend.js'

const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

test("a kick is its pattern times each listed field's rms of u over the pattern's, added to u and u_prev, as the CPU twin adds it, nothing read back", async () => {
  const [n, fields] = [40, 4]
  const cells = n * n
  const [gpu, cpu] = [await gpuBackend(n, fields), await cpuBackend(n, fields)]
  try {
    // fields of other strengths: field f's u scaled by f + 1
    const [u, prev] = [randomField(n, fields, 1), randomField(n, fields, 2)]
    u.forEach((v, i) => (u[i] = Math.fround(v * (1 + Math.floor(i / cells)))))
    for (const b of [gpu, cpu]) await b.load(u, prev)
    const rand = rng(3)
    const pattern = Float32Array.from({ length: cells }, () => rand() - 0.5)
    const inverseRms = Math.fround(1 / rms(pattern))
    const counts = (gpu as GpuFieldBackend).transfers
    const reads = counts.snapshot().reads
    for (const b of [gpu, cpu]) await b.kick([3, 1], pattern, inverseRms)
    expect(counts.snapshot().reads).toBe(reads)
    await expect(gpu.kick([2, 2], pattern, inverseRms)).rejects.toThrow('lists a field twice')
    const [g, c] = [await gpu.read(), await cpu.read()]
    const exact = await softwareGpu()
    for (const [got, want] of [
      [g.u, c.u],
      [g.prev, c.prev],
    ]) {
      if (exact) expect(bits(got).equals(bits(want))).toBe(true)
      else for (let i = 0; i < got.length; i++) expect(Math.abs(got[i] - want[i])).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(want[i])))
    }
    // the controls: the fields not listed are as they were; a listed one moved by its own rms over the pattern's (float64)
    const field = (a: Float32Array, f: number) => a.subarray(f * cells, (f + 1) * cells)
    for (const f of [0, 2]) expect(bits(field(g.u, f)).equals(bits(field(u, f)))).toBe(true)
    for (const f of [1, 3]) {
      const scale = rms(field(u, f)) / rms(pattern)
      expect(kickScale(field(u, f), inverseRms) / scale).toBeCloseTo(1, 5)
      const added = field(c.u, f).map((v, i) => v - field(u, f)[i])
      for (const i of [0, 17, cells - 1]) expect(added[i]).toBeCloseTo(pattern[i] * scale, 4)
    }
  } finally {
    for (const b of [gpu, cpu]) b.destroy()
  }
})

test("an engine's kick is booked as an injection, alike on both backends", async () => {
  const opened = await Promise.all(
    (['gpu', 'cpu'] as const).map((backend) =>
      engineOn(backend, { size: 32, fields: 3, material: 'europium_crystal', seed: 2, noise: 0, timeline_interval: 0 }),
    ),
  )
  try {
    const books = []
    for (const engine of opened) {
      const rand = rng(4)
      await engine.injectMany([0, 1, 2].map(() => Float32Array.from({ length: 32 * 32 }, () => rand() - 0.5)))
      await engine.step(20)
      const before = await engine.books()
      await engine.kick(
        Float32Array.from({ length: 32 * 32 }, () => rand() - 0.5),
        [0, 2],
      )
      const after = await engine.books()
      // what the kick added is booked as injected: the books still close
      for (const f of [0, 2]) expect(after[f].injected).toBeGreaterThan(before[f].injected)
      expect(after[1].injected).toBe(before[1].injected)
      books.push(after)
      await expect(engine.kick(new Float32Array(5), [0])).rejects.toThrow("a kick's pattern for this field has 1024 cells, got 5")
      await expect(engine.kick(new Float32Array(32 * 32), [1, 1])).rejects.toThrow('a kick lists a field twice (1, 1)')
      await expect(engine.kick(new Float32Array(32 * 32), [3])).rejects.toThrow('field must be a whole number from 0 to 2')
    }
    // within the books' tolerance between backends (engine/field/engine.test.ts)
    const [g, c] = books
    for (let f = 0; f < 3; f++) expect(Math.abs(g[f].injected - c[f].injected)).toBeLessThanOrEqual(1e-4 * c[f].injected)
  } finally {
    for (const e of opened) e.destroy()
  }
})

test('an erasure zeroes u and u_prev at the cells listed, as a scaling by a mask of 0 there does, on both backends and booked alike; on the GPU only the cells go up and nothing comes back', async () => {
  const [n, fields] = [32, 3]
  const cells = n * n
  const lists = [
    { field: 2, cells: Array.from({ length: 200 }, (_, k) => 200 + k) },
    { field: 0, cells: [0, 5, 100, cells - 1] },
  ]
  const listed = lists.reduce((sum, l) => sum + l.cells.length, 0)
  const mask = new Float32Array(cells * fields).fill(1)
  for (const l of lists) for (const c of l.cells) mask[l.field * cells + c] = 0
  const opened: Engine[] = []
  const prepared = async (backend: 'gpu' | 'cpu') => {
    const e = await engineOn(backend, { size: n, fields, material: 'europium_crystal', seed: 2, noise: 0, timeline_interval: 0 })
    opened.push(e)
    const rand = rng(6)
    await e.injectMany([0, 1, 2].map(() => Float32Array.from({ length: cells }, () => rand() - 0.5)))
    await e.step(20)
    return e
  }
  // zeros compared as numbers: a scaling by 0 leaves -0 where u was negative, the erasure +0
  const same = (a: Float32Array, b: Float32Array) => a.length === b.length && a.every((v, i) => v === b[i])
  try {
    const results = []
    for (const backend of ['gpu', 'cpu'] as const) {
      const [erased, scaled] = [await prepared(backend), await prepared(backend)]
      const before = await erased.read()
      const booked = await erased.books()
      const counts = () => erased.transfers() ?? { reads: 0, bytes_written: 0 }
      const [reads, written] = [counts().reads, counts().bytes_written]
      await erased.erase(lists)
      const sent = counts().bytes_written - written
      expect(counts().reads).toBe(reads)
      const scaledWritten = scaled.transfers()?.bytes_written ?? 0
      await scaled.scale(mask)
      if (backend === 'gpu') {
        // the cells and a uniform, and the books' held sums' uniforms; the control, the mask, is every cell
        expect(sent).toBeLessThan(4 * listed + 4096)
        expect(scaled.transfers()!.bytes_written - scaledWritten).toBeGreaterThanOrEqual(4 * cells * fields)
      }
      const [e, s] = [await erased.read(), await scaled.read()]
      expect(same(e.u, s.u) && same(e.prev, s.prev)).toBe(true)
      // the control: the cells erased held values, and the others are as they were
      expect(lists.every((l) => l.cells.some((c) => before.u[l.field * cells + c] !== 0))).toBe(true)
      expect(mask.every((m, i) => m === 0 || e.u[i] === before.u[i])).toBe(true)
      const [eb, sb] = [await erased.books(), await scaled.books()]
      eb.forEach((b, f) => expect(Math.abs(b.energy - sb[f].energy)).toBeLessThanOrEqual(1e-6 * sb[f].energy))
      // booked as a change: the energy it took out, as injected; a field not listed is not touched
      expect(eb[2].injected).toBeLessThan(booked[2].injected)
      expect(eb[1].injected).toBe(booked[1].injected)
      results.push({ state: e, books: eb })
      await expect(erased.erase([lists[1], lists[1]])).rejects.toThrow('an erasure lists a field twice (0, 0)')
      await expect(erased.erase([{ field: 1, cells: [cells] }])).rejects.toThrow(
        `field 1's erasure lists cell ${cells}, outside 0 to ${cells - 1}`,
      )
      await expect(erased.erase([{ field: 3, cells: [0] }])).rejects.toThrow('field must be a whole number from 0 to 2')
    }
    // the backends agree: the same zeros, and fields within the step's tolerance between them
    const [g, c] = results
    for (let i = 0; i < mask.length; i++) if (mask[i] === 0) expect(g.state.u[i]).toBe(0)
    g.books.forEach((b, f) => expect(Math.abs(b.energy - c.books[f].energy)).toBeLessThanOrEqual(1e-4 * c.books[f].energy))
  } finally {
    for (const e of opened) e.destroy()
  }
})
