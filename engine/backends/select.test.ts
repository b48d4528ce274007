// Backend choice (DESIGN.md section 3), on this machine's real WebGPU, whatever its adapter is: a
// software one (SwiftShader on CI) or a hardware GPU.
import { describe, expect, test } from 'vitest'
import { spawnNodeThread } from '../cpu/threads.node.js'
import { CrystalError } from '../errors.js'
import { findAdapter } from '../gpu/device.js'
import { nodeGpu } from '../gpu/webgpu.node.js'
import { createEngine } from '../field/engine.js'
import { selectBackend } from './select.js'
import type { GpuFieldBackend } from '../gpu/backend.js'
import { STEPS_PER_DISPATCH } from '../field/params.js'

/** A stand-in for navigator.gpu whose one adapter describes itself as `info` says. */
const gpuWith = (info: Partial<GPUAdapterInfo> & { isFallbackAdapter?: boolean }) =>
  ({ requestAdapter: async () => ({ info }) }) as unknown as GPU

describe('backend selection', () => {
  test('auto takes a hardware adapter, or the CPU backend where the only adapter is a software one, and says why, once', async () => {
    const adapter = await findAdapter(await nodeGpu())
    expect(adapter, 'this machine has no WebGPU adapter (install a Vulkan driver or SwiftShader)').toBeDefined()
    const lines: string[] = []
    const e = await createEngine({
      backend: 'auto',
      size: 16,
      gpu: nodeGpu,
      spawnThread: spawnNodeThread,
      threads: 2,
      report: (l) => lines.push(l),
    })
    expect(lines).toHaveLength(1)
    expect(e.backend_reason).toBe(lines[0])
    if (adapter!.software) {
      expect(e.backend).toBe('cpu')
      expect(lines[0]).toBe(
        `cpu backend: the only WebGPU adapter is a software one (${adapter!.name}), slower than the CPU (WebAssembly SIMD, 2 threads)`,
      )
    } else {
      expect(e.backend).toBe('gpu')
      expect(lines[0]).toBe(`gpu backend: hardware adapter ${adapter!.name}`)
    }
    e.destroy()
  })

  test('adapters are told apart by what they say of themselves', async () => {
    expect((await findAdapter(gpuWith({ vendor: 'nvidia', architecture: 'hopper', description: 'NVIDIA H200' })))?.software).toBe(false)
    expect((await findAdapter(gpuWith({ vendor: 'google', description: 'SwiftShader Device (Subzero)' })))?.software).toBe(true)
    expect((await findAdapter(gpuWith({ vendor: 'mesa', description: 'llvmpipe (LLVM 15.0.6, 256 bits)' })))?.software).toBe(true)
    expect((await findAdapter(gpuWith({ vendor: 'x', isFallbackAdapter: true })))?.software).toBe(true)
  })

  test('the GPU step takes one step a dispatch unless asked, on a hardware adapter too (4 did not pay on the H200); asked, 4', async () => {
    // this machine's adapter, saying it is an H200: the choice reads what the adapter says of itself
    const real = await nodeGpu()
    const h200 = { vendor: 'nvidia', architecture: 'hopper', description: 'NVIDIA H200' }
    const hardware = {
      requestAdapter: async (options?: GPURequestAdapterOptions) => {
        const adapter = (await real.requestAdapter(options))!
        return new Proxy(adapter, {
          get: (target, key) => {
            if (key === 'info') return h200
            const value = Reflect.get(target, key)
            return typeof value === 'function' ? value.bind(target) : value
          },
        })
      },
    } as unknown as GPU
    expect((await findAdapter(hardware))?.software).toBe(false)
    // evolve's defaults: 24 fields of 96 x 96
    for (const [asked, want] of [
      [undefined, 1],
      [STEPS_PER_DISPATCH, STEPS_PER_DISPATCH],
    ] as const) {
      const { backend } = await selectBackend({ backend: 'gpu', n: 96, fields: 24, gpu: async () => hardware, stepsPerDispatch: asked })
      expect((backend as GpuFieldBackend).stepsPerDispatch).toBe(want)
      backend.destroy()
    }
  })

  test('auto without any WebGPU takes the CPU backend', async () => {
    const { backend, reason } = await selectBackend({ backend: 'auto', n: 16, fields: 1, gpu: async () => undefined })
    expect(backend.kind).toBe('cpu')
    expect(reason).toBe('cpu backend: no WebGPU adapter (WebAssembly SIMD, 1 thread)')
    backend.destroy()
  })

  test('gpu is honoured on any adapter, software ones named so, and refused clearly where there is none', async () => {
    const adapter = (await findAdapter(await nodeGpu()))!
    const { backend, reason } = await selectBackend({ backend: 'gpu', n: 16, fields: 1, gpu: nodeGpu })
    expect(backend.kind).toBe('gpu')
    expect(reason).toBe(`gpu backend: asked for (${adapter.name}${adapter.software ? ', software' : ''})`)
    // several steps a dispatch on a hardware adapter only, for this small batch
    expect((backend as GpuFieldBackend).stepsPerDispatch).toBe(adapter.software ? 1 : STEPS_PER_DISPATCH)
    backend.destroy()
    const none = await selectBackend({ backend: 'gpu', n: 16, fields: 1, gpu: async () => undefined }).catch((e) => e)
    expect(none).toBeInstanceOf(CrystalError)
    expect(none.code).toBe('backend_unavailable')
    expect(none.hint).toContain('--backend cpu')
  })
})
