// Backend choice (DESIGN.md section 3), on this machine's real WebGPU: a software adapter only.
import { describe, expect, test } from 'vitest'
import { spawnNodeThread } from '../cpu/threads.node.js'
import { CrystalError } from '../errors.js'
import { nodeGpu } from '../gpu/webgpu.node.js'
import { createEngine } from '../field/engine.js'
import { selectBackend } from './select.js'

describe('backend selection', () => {
  test('auto with only a software adapter (SwiftShader) takes the CPU backend and says why, once', async () => {
    const lines: string[] = []
    const e = await createEngine({ backend: 'auto', size: 16, gpu: nodeGpu, spawnThread: spawnNodeThread, threads: 2, report: (l) => lines.push(l) })
    expect(e.backend).toBe('cpu')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^cpu backend: the only WebGPU adapter is a software one \(.*swiftshader.*\), slower than the CPU \(WebAssembly SIMD, 2 threads\)$/i)
    expect(e.backend_reason).toBe(lines[0])
    e.destroy()
  })

  test('auto without any WebGPU takes the CPU backend', async () => {
    const { backend, reason } = await selectBackend({ backend: 'auto', n: 16, fields: 1, gpu: async () => undefined })
    expect(backend.kind).toBe('cpu')
    expect(reason).toBe('cpu backend: no WebGPU adapter (WebAssembly SIMD, 1 thread)')
    backend.destroy()
  })

  test('gpu is honoured on a software adapter, and refused clearly where there is none', async () => {
    const { backend, reason } = await selectBackend({ backend: 'gpu', n: 16, fields: 1, gpu: nodeGpu })
    expect(backend.kind).toBe('gpu')
    expect(reason).toMatch(/^gpu backend: asked for \(.*, software\)$/)
    backend.destroy()
    const none = await selectBackend({ backend: 'gpu', n: 16, fields: 1, gpu: async () => undefined }).catch((e) => e)
    expect(none).toBeInstanceOf(CrystalError)
    expect(none.code).toBe('backend_unavailable')
    expect(none.hint).toContain('--backend cpu')
  })
})
