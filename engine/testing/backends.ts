// Backends for tests: the real ones. The GPU one is WebGPU on whatever adapter Dawn finds (SwiftShader
// on CI, installed by scripts/install-system-deps.sh); a machine without one fails these tests loudly.
import { spawnNodeThread } from '../cpu/threads.node.js'
import type { FieldBackend } from '../field/backend.js'
import type { Engine, EngineOptions } from '../field/engine.js'
import { selectBackend } from '../backends/select.js'
import { nodeGpu } from '../gpu/webgpu.node.js'
import { createNodeEngine } from '../node.js'

export async function gpuBackend(n: number, fields: number): Promise<FieldBackend> {
  return (await selectBackend({ backend: 'gpu', n, fields, gpu: nodeGpu })).backend
}

export async function cpuBackend(n: number, fields: number, threads = 1): Promise<FieldBackend> {
  return (await selectBackend({ backend: 'cpu', n, fields, threads, spawnThread: spawnNodeThread })).backend
}

export function engineOn(backend: 'gpu' | 'cpu', o: EngineOptions = {}): Promise<Engine> {
  return createNodeEngine({ backend, ...o })
}
