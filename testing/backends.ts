// Backends for tests: the real ones. The GPU one is WebGPU on whatever adapter Dawn finds (SwiftShader
// on CI, installed by scripts/install-system-deps.sh); a machine without one fails these tests loudly.
import { spawnNodeThread } from '../engine/cpu/threads.node.js'
import type { FieldBackend } from '../engine/field/backend.js'
import type { Engine, EngineOptions } from '../engine/field/engine.js'
import { selectBackend } from '../engine/backends/select.js'
import { findAdapter } from '../engine/gpu/device.js'
import { nodeGpu } from '../engine/gpu/webgpu.node.js'
import { createNodeEngine } from '../engine/node.js'

/**
 * The test adapter is a software one (SwiftShader on CI): there the GPU kernels give their CPU twins'
 * bits; a hardware GPU's driver fuses multiply-adds, an ulp an operation, so tests allow that there.
 */
export async function softwareGpu(): Promise<boolean> {
  return (await findAdapter(await nodeGpu()))?.software ?? true
}

export async function gpuBackend(n: number, fields: number): Promise<FieldBackend> {
  return (await selectBackend({ backend: 'gpu', n, fields, gpu: nodeGpu })).backend
}

export async function cpuBackend(n: number, fields: number, threads = 1): Promise<FieldBackend> {
  return (await selectBackend({ backend: 'cpu', n, fields, threads, spawnThread: spawnNodeThread })).backend
}

export function engineOn(backend: 'gpu' | 'cpu', o: EngineOptions = {}): Promise<Engine> {
  return createNodeEngine({ backend, ...o })
}
