// One device per process and feature set (device.ts keptDevice): engines opened one after another
// share it and the kernels compiled on it, a destroyed engine leaves it working for the others, and
// a lost device is forgotten. On this machine's real WebGPU, whatever its adapter is.
import { describe, expect, test } from 'vitest'
import { selectBackend } from '../backends/select.js'
import { MaterialCatalog } from '../field/materials.js'
import { stepParams } from '../field/params.js'
import { GpuFieldBackend } from './backend.js'
import { forgetKernels } from './context.js'
import { keptDevice } from './device.js'
import { nodeGpu } from './webgpu.node.js'
import { watchCompiles } from '../../testing/backends.js'

const open = async (subgroups?: boolean) =>
  (await selectBackend({ backend: 'gpu', n: 32, fields: 2, gpu: nodeGpu, subgroups })).backend as GpuFieldBackend

describe('the kept device', () => {
  test('engines opened one after another share the device and its kernels; destroying one leaves the other working', async () => {
    const a = await open()
    const b = await open()
    expect(b.device).toBe(a.device)
    expect(b.fieldStep.pipeline).toBe(a.fieldStep.pipeline)
    a.destroy()
    const wave = new Float32Array(32 * 32).map((_, i) => Math.sin(i * 0.1))
    await b.inject([1], [wave])
    const { u } = await b.read([1])
    expect(u).toEqual(wave)
    b.destroy()
    // a backend forcing shared-memory tile sums has a device of its own, without subgroups
    const c = await open(false)
    expect(c.device).not.toBe(a.device)
    expect(c.device.features.has('subgroups')).toBe(false)
    c.destroy()
  })

  test("a batch whose state exceeds the device's buffers is refused before anything is made, naming how many fields fit", async () => {
    const { device, choice } = (await keptDevice(await nodeGpu()))!
    const n = 512
    const room = Math.min(device.limits.maxBufferSize, device.limits.maxStorageBufferBindingSize)
    const most = Math.floor(room / (n * n * 4))
    const opening = GpuFieldBackend.create(device, n, most + 1, choice.name)
    await expect(opening).rejects.toMatchObject({ code: 'backend_unavailable' })
    await expect(opening).rejects.toThrow(
      `at most ${most} fields at this size (evolve runs up to 3 a genome: --population ${Math.floor(most / 3)} at most)`,
    )
    // the device is left as it was: a batch that fits opens on it
    const fits = await open()
    expect(fits.device).toBe(device)
    fits.destroy()
  })

  test('a lost device is forgotten: the next engine opens a new one', async () => {
    const gpu = await nodeGpu()
    const first = (await keptDevice(gpu))!.device
    first.destroy()
    await first.lost
    const next = await open()
    expect(next.device).not.toBe(first)
    expect((await keptDevice(gpu))!.device).toBe(next.device)
    next.destroy()
  })

  test("the field step's kernels are compiled once a device: the held sums use the backend's energy and potential", async () => {
    const { device } = (await keptDevice(await nodeGpu()))!
    // the kernels made so far are forgotten, so this backend compiles them all again, under the count
    forgetKernels(device)
    const compiled: string[] = []
    const stop = watchCompiles(device, (d) => compiled.push(d.compute.entryPoint ?? ''))
    try {
      const backend = await open()
      const params = stepParams({ n: 32, fields: 2, material: new MaterialCatalog().get('europium_crystal'), temperature_k: 4, noise: 0 })
      backend.held.hold(['energy', 'potential'], params)
      expect((await backend.held.release()).length).toBe(4)
      backend.destroy()
    } finally {
      stop()
    }
    // before, the held sums compiled their own (layout 'auto'): energy and potential twice each
    expect(compiled.filter((e) => e === 'energy')).toEqual(['energy'])
    expect(compiled.filter((e) => e === 'potential')).toEqual(['potential'])
  })
})
