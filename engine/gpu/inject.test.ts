// shaders/inject.wgsl (engine/gpu/inject.ts) against its CPU twin, WasmFieldBackend.inject: the waves of
// a call land in their own fields, in u and u_prev, bit for bit as the CPU adds them (an addition is
// correctly rounded on any adapter), in one dispatch however many fields they go to, handed over to go
// with the next submit.
import { expect, test } from 'vitest'
import { cpuBackend, gpuBackend } from '../../testing/backends.js'
import { sharedFloats } from '../detect/spectra.js'
import { MaterialCatalog } from '../field/materials.js'
import { stepParams } from '../field/params.js'
import { rng } from '../util/rng.js'
import type { GpuFieldBackend } from './backend.js'
import { SIDES } from './inject.js'

const waves = (count: number, cells: number, seed: number) => {
  const rand = rng(seed)
  return Array.from({ length: count }, () => Float32Array.from({ length: cells }, () => rand() - 0.5))
}
const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

test("a call's waves are added to u and u_prev of their fields, as the CPU twin adds them, in one submit and one dispatch", async () => {
  const [n, fields] = [30, 6]
  const cells = n * n
  const [gpu, cpu] = [await gpuBackend(n, fields), await cpuBackend(n, fields)]
  try {
    const [first, second] = [waves(3, cells, 1), waves(1, cells, 2)]
    const counts = (gpu as GpuFieldBackend).transfers
    const before = { ...counts.snapshot() }
    for (const b of [gpu, cpu]) await b.inject([4, 0, 2], first)
    const after = counts.snapshot()
    // the three waves side by side in one write, where they go in another; one dispatch, handed over to
    // go with the next submit (Transfers.submitWithNext)
    expect([after.submits - before.submits, after.dispatches - before.dispatches, after.writes - before.writes]).toEqual([0, 1, 2])
    // a second call onto a field that holds a wave adds to it; its wave on shared memory, as evolve's are (Dawn's binding takes none).
    // Its wave goes up on the injector's next side, where the first call's waiting work reads none: no submit
    const shared = sharedFloats(cells)
    shared.set(second[0])
    for (const b of [gpu, cpu]) await b.inject([4], [shared])
    expect(counts.submits - after.submits).toBe(0)
    const [g, c] = [await gpu.read(), await cpu.read()]
    expect(bits(g.u).equals(bits(c.u))).toBe(true)
    expect(bits(g.prev).equals(bits(c.prev))).toBe(true)
    // where each went: the control is the waves themselves, field by field
    const field = (a: Float32Array, f: number) => a.subarray(f * cells, (f + 1) * cells)
    expect(field(g.u, 0)).toEqual(first[1])
    expect(field(g.prev, 2)).toEqual(first[2])
    expect(field(g.u, 4)).toEqual(first[0].map((v, i) => Math.fround(v + second[0][i])))
    for (const f of [1, 3, 5]) expect(field(g.u, f).every((v) => v === 0)).toBe(true)
    await expect(gpu.inject([1, 1], waves(2, cells, 3))).rejects.toThrow('lists a field twice')
    // the energies of the fields listed, in their order, are those of every field's (what books an injection)
    const params = stepParams({ n, fields, material: new MaterialCatalog().get('europium_crystal'), temperature_k: 0, noise: 0 })
    for (const b of [gpu, cpu]) {
      const all = await b.energy(params)
      expect(all[4]).toBeGreaterThan(0)
      expect([...(await b.energy(params, [4, 0, 3]))]).toEqual([all[4], all[0], all[3]])
      // a field the backend does not have is an error that names it, not a read past the fields (or NaN)
      await expect(b.energy(params, [2, fields])).rejects.toThrow(`field ${fields} is not one of this backend's fields 0..${fields - 1}`)
      await expect(b.read([-1])).rejects.toThrow('field -1 is not one')
    }
  } finally {
    for (const b of [gpu, cpu]) b.destroy()
  }
})

test('more waves than one dispatch holds (64 MiB of them) go in as many dispatches, each on its own side, handed over', async () => {
  const [n, fields] = [2048, 5]
  const cells = n * n
  const gpu = await gpuBackend(n, fields)
  try {
    const w = waves(fields, cells, 4)
    const counts = (gpu as GpuFieldBackend).transfers
    const before = counts.submits
    await gpu.inject([3, 1, 0, 4, 2], w)
    // four 16 MiB waves a dispatch, the second's on the injector's next side: both handed over, submitted
    // with the read
    expect(counts.submits - before).toBe(0)
    // onto zeros, a field holds its wave: the last one (the second dispatch's) and one of the first
    const { u, prev } = await gpu.read([2, 3])
    for (const a of [u, prev]) expect(bits(a).equals(Buffer.concat([bits(w[4]), bits(w[0])]))).toBe(true)
  } finally {
    gpu.destroy()
  }
}, 120_000)

test('an injection handed over is submitted before a load: the field read after is the one loaded', async () => {
  const [n, fields] = [16, 2]
  const cells = n * n
  const gpu = (await gpuBackend(n, fields)) as GpuFieldBackend
  try {
    const [u, prev] = waves(2, fields * cells, 5)
    const submits = gpu.transfers.submits
    await gpu.inject([1], waves(1, cells, 6))
    expect(gpu.transfers.submits).toBe(submits) // handed over
    // the load's writes reach the states the injection adds to: it goes first, so the load is last
    await gpu.load(u, prev)
    const back = await gpu.read()
    expect(bits(back.u).equals(bits(u))).toBe(true)
    expect(bits(back.prev).equals(bits(prev))).toBe(true)
  } finally {
    gpu.destroy()
  }
})

test("the injector's sides come round: a call's waves go up where the call SIDES before read them, once that one is submitted", async () => {
  const [n, fields] = [16, SIDES + 2]
  const cells = n * n
  const [gpu, cpu] = [await gpuBackend(n, fields), await cpuBackend(n, fields)]
  try {
    const each = waves(fields, cells, 7)
    const counts = (gpu as GpuFieldBackend).transfers
    const before = counts.submits
    // one call a field, every one handed over; call SIDES + 1 takes the first call's side, which waits
    for (const [f, wave] of each.entries()) for (const b of [gpu, cpu]) await b.inject([f], [wave])
    expect(counts.submits - before).toBe(1)
    // had the first call read the waves that replaced its own, field 0 would hold field SIDES's wave
    const [g, c] = [await gpu.read(), await cpu.read()]
    expect(bits(g.u).equals(bits(c.u))).toBe(true)
    for (const [f, wave] of each.entries()) expect(bits(g.prev.subarray(f * cells, (f + 1) * cells)).equals(bits(wave))).toBe(true)
  } finally {
    for (const b of [gpu, cpu]) b.destroy()
  }
})
