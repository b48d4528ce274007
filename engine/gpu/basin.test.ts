// shaders/basin.wgsl and shaders/erase.wgsl `regrowth` (engine/gpu/record.ts perturbationSums) against
// their CPU twin (engine/cpu/record.ts; engine/detect/basin.ts basinSums, engine/detect/regrowth.ts
// regrowthSums over erasePlan's window): what evolve's perturbation reads of the stability sums, made
// where the fields live from the sums held before the kick or erasure and those after, in one read;
// bit for bit on a software adapter.
import { expect, test } from 'vitest'
import { engineOn, softwareGpu } from '../../testing/backends.js'
import { BASIN_SUMS, basinFrom, basinSums } from '../detect/basin.js'
import { shapeSums } from '../detect/detect.js'
import { erasePlan } from '../detect/erase_plan.js'
import { REGROWTH_SUMS, regrowthFrom, regrowthSums } from '../detect/regrowth.js'
import type { Engine } from '../field/engine.js'
import { rng } from '../util/rng.js'

const [N, FIELDS] = [40, 5]
const CELLS = N * N
const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)
const field = (a: Float32Array, f: number) => a.subarray(f * CELLS, (f + 1) * CELLS)

/** A window of stability samples, as evolve observes one. */
async function observe(engine: Engine, samples: number): Promise<void> {
  for (let s = 0; s < samples; s++) {
    await engine.step(5)
    await engine.accumulateStability(s === 0)
  }
}

/** Fields pulsed differently, observed, then held, kicked (fields 1 and 3) and two erased, and observed again. */
async function perturbed(backend: 'gpu' | 'cpu') {
  const engine = await engineOn(backend, { size: N, fields: FIELDS, material: 'europium_crystal', seed: 4, noise: 0, timeline_interval: 0 })
  const rand = rng(8)
  await engine.injectMany(Array.from({ length: FIELDS }, () => Float32Array.from({ length: CELLS }, () => rand() - 0.5)))
  await engine.step(30)
  await observe(engine, 4)
  const before = (await engine.collectRecording()).sums.slice()
  await engine.holdStability()
  const pattern = Float32Array.from({ length: CELLS }, () => rand() - 0.5)
  await engine.kick(pattern, [1, 3])
  // a blob near the middle, and one on the field's edge (its disc cut by the edge)
  const erased = [
    { field: 2, sums: shapeSums(disc(18, 21, 5), N) },
    { field: 0, sums: shapeSums(disc(2, 30, 4), N) },
  ]
  await engine.erase(erased)
  await engine.step(20)
  await observe(engine, 4)
  const counts = engine.transfers()
  const reads = counts?.reads ?? 0
  const sums = await engine.perturbationSums({ pattern, basins: [3, 1], erased })
  const readsTaken = (engine.transfers()?.reads ?? 0) - reads
  // the same sums made again, riding on the next read (the recording's here)
  const readsBefore = engine.transfers()?.reads ?? 0
  const later = await engine.perturbationSumsLater({ pattern, basins: [3, 1], erased })
  const after = (await engine.collectRecording()).sums.slice()
  const rode = await later()
  const readsRiding = (engine.transfers()?.reads ?? 0) - readsBefore
  return { engine, before, after, pattern, erased, sums, readsTaken, rode, readsRiding }
}

/** The cells within r of (x, y), in index order. */
function disc(x: number, y: number, r: number): number[] {
  return Array.from({ length: CELLS }, (_, c) => c).filter((c) => Math.hypot((c % N) - x, Math.floor(c / N) - y) <= r)
}

test("a perturbation's basin sums and regrowth sums are made where the fields live, in one read (or riding on the next), as the CPU twin makes them (the disc decided there from the part's sums)", async () => {
  const [gpu, cpu] = [await perturbed('gpu'), await perturbed('cpu')]
  try {
    const exact = await softwareGpu()
    expect(gpu.readsTaken).toBe(1)
    // riding: the recording's read brought them, none of their own
    expect(gpu.readsRiding).toBe(1)
    for (const run of [gpu, cpu]) {
      expect(bits(run.rode.basins).equals(bits(run.sums.basins))).toBe(true)
      expect(bits(run.rode.regrowths).equals(bits(run.sums.regrowths))).toBe(true)
      // the twin over the sums each engine holds: the kicked fields' basin sums, in the order listed
      const want = new Float32Array(2 * BASIN_SUMS)
      ;[3, 1].forEach((f, k) => want.set(basinSums(field(run.before, f), run.pattern, field(run.after, f)), k * BASIN_SUMS))
      if (exact || run === cpu) expect(bits(run.sums.basins).equals(bits(want))).toBe(true)
      else
        for (let q = 0; q < want.length; q++)
          expect(Math.abs(run.sums.basins[q] - want[q])).toBeLessThanOrEqual(1e-5 * Math.abs(want[q]) + 1e-9)
      // the erased fields' regrowth sums over their plans' discs, in the order listed
      const regrowths = new Float32Array(2 * REGROWTH_SUMS)
      run.erased.forEach(({ field: f, sums }, k) =>
        regrowths.set(regrowthSums(field(run.before, f), field(run.after, f), erasePlan(N, sums).window), k * REGROWTH_SUMS),
      )
      if (exact || run === cpu) expect(bits(run.sums.regrowths).equals(bits(regrowths))).toBe(true)
      else
        for (let q = 0; q < regrowths.length; q++)
          expect(Math.abs(run.sums.regrowths[q] - regrowths[q])).toBeLessThanOrEqual(1e-5 * Math.abs(regrowths[q]) + 1e-9)
      // the control: over another disc (a cell wider) the sums differ
      const wider = { ...run.erased[0].sums, radii: run.erased[0].sums.radii + (run.erased[0].sums.cells * 8192) / 2 }
      const other = regrowthSums(field(run.before, 2), field(run.after, 2), erasePlan(N, wider).window)
      expect(bits(other).equals(bits(regrowths.subarray(0, REGROWTH_SUMS)))).toBe(false)
    }
    // the two backends' fields agree (bit for bit on a software adapter), and so do their answers
    for (let k = 0; k < 2; k++) {
      expect(basinFrom(gpu.sums.basins, k * BASIN_SUMS)).toBeCloseTo(basinFrom(cpu.sums.basins, k * BASIN_SUMS), 5)
      expect(regrowthFrom(gpu.sums.regrowths, k * REGROWTH_SUMS)).toBeCloseTo(regrowthFrom(cpu.sums.regrowths, k * REGROWTH_SUMS), 5)
    }
    if (exact) expect(bits(gpu.sums.regrowths).equals(bits(cpu.sums.regrowths))).toBe(true)
    // each kicked field's sums are its own: the two answer differently
    const basins = [0, 1].map((k) => basinFrom(gpu.sums.basins, k * BASIN_SUMS))
    expect(basins[0]).not.toBe(basins[1])
  } finally {
    gpu.engine.destroy()
    cpu.engine.destroy()
  }
})

test("a basin or a regrowth without sums held is refused, and so are a bad pattern, field or plan's sums; nothing asked, nothing read", async () => {
  for (const backend of ['gpu', 'cpu'] as const) {
    const engine = await engineOn(backend, { size: 16, fields: 2, material: 'europium_crystal', seed: 1, noise: 0, timeline_interval: 0 })
    try {
      const pattern = new Float32Array(256)
      const plan = { field: 1, sums: shapeSums([17, 18, 33, 34], 16) }
      await expect(engine.perturbationSums({ pattern, basins: [0], erased: [] })).rejects.toThrow('hold them first (engine.holdStability)')
      await expect(engine.perturbationSums({ pattern, basins: [], erased: [plan] })).rejects.toThrow(
        'hold them first (engine.holdStability)',
      )
      await expect(engine.perturbationSums({ pattern: new Float32Array(3), basins: [], erased: [] })).rejects.toThrow(
        'has 256 cells, got 3',
      )
      await expect(engine.perturbationSums({ pattern, basins: [2], erased: [] })).rejects.toThrow(
        'field must be a whole number from 0 to 1',
      )
      await expect(
        engine.perturbationSums({ pattern, basins: [], erased: [{ ...plan, sums: { ...plan.sums, cells: 0 } }] }),
      ).rejects.toThrow("field 1's erasure plan has cells 0, not a whole number from 1 to 256")
      await expect(engine.holdStability(new Float32Array(7))).rejects.toThrow('have 512 floats, got 7')
      const reads = engine.transfers()?.reads
      const none = await engine.perturbationSums({ pattern, basins: [], erased: [] })
      expect([none.basins.length, none.regrowths.length, engine.transfers()?.reads]).toEqual([0, 0, reads])
      // a map from elsewhere held: the basin and the regrowth compare with it
      const map = Float32Array.from({ length: 512 }, (_, i) => (i % 16) / 16)
      await engine.holdStability(map)
      const both = await engine.perturbationSums({ pattern, basins: [], erased: [plan] })
      expect(both.regrowths[1]).toBeCloseTo(regrowthSums(map.subarray(256), new Float32Array(256), erasePlan(16, plan.sums).window)[1], 6)
      const sums = await engine.perturbationSums({ pattern, basins: [1], erased: [] })
      expect(sums.basins[1]).toBeCloseTo(basinSums(map.subarray(256), pattern, new Float32Array(256))[1], 6)
    } finally {
      engine.destroy()
    }
  }
})

test('the sums held outlive a new window started after them', async () => {
  for (const backend of ['gpu', 'cpu'] as const) {
    const engine = await engineOn(backend, { size: 16, fields: 2, material: 'europium_crystal', seed: 1, noise: 0, timeline_interval: 0 })
    try {
      const map = Float32Array.from({ length: 512 }, (_, i) => (i % 16) / 16)
      const pattern = Float32Array.from({ length: 256 }, (_, i) => (i % 7) - 3)
      await engine.holdStability(map)
      // a window of another length (the recorder's planes made anew), and its collection
      for (let slot = 0; slot < 4; slot++) await engine.captureFrame(slot, 4)
      await engine.collectRecording()
      const sums = await engine.perturbationSums({ pattern, basins: [1], erased: [] })
      expect(sums.basins[1]).toBeCloseTo(basinSums(map.subarray(256), pattern, new Float32Array(256))[1], 6)
      await expect(engine.perturbationSums({ pattern, basins: [1, 1], erased: [] })).rejects.toThrow('lists a kicked field twice (1, 1)')
    } finally {
      engine.destroy()
    }
  }
})
