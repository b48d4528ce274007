// One device per process and feature set (device.ts keptDevice): engines opened one after another
// share it and the kernels compiled on it, a destroyed engine leaves it working for the others, and
// a lost device is forgotten. On this machine's real WebGPU, whatever its adapter is.
import { describe, expect, test } from 'vitest'
import { selectBackend } from '../backends/select.js'
import type { GpuFieldBackend } from './backend.js'
import { keptDevice } from './device.js'
import { nodeGpu } from './webgpu.node.js'

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
})
