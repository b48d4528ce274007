// The engine in Node: Dawn's WebGPU and worker-thread CPU helpers filled in. Browser code calls
// createEngine directly with navigator.gpu.
import { availableParallelism } from 'node:os'
import { spawnNodeThread } from './cpu/threads.node.js'
import { createEngine, type Engine, type EngineOptions } from './field/engine.js'
import { nodeGpu } from './gpu/webgpu.node.js'

/**
 * Below this many cells per step, helper threads cost more (one barrier a step) than they give:
 * measured with `npm run bench` on 2 cores, N = 128 ran at 274 M/s on one thread and 233 M/s on two.
 */
export const THREADS_PAY_FROM_CELLS = 256 * 256

export function createNodeEngine(o: EngineOptions = {}): Promise<Engine> {
  const cells = (o.size ?? 128) ** 2 * (o.fields ?? 1)
  const threads = o.threads ?? (cells >= THREADS_PAY_FROM_CELLS ? availableParallelism() : 1)
  return createEngine({ gpu: nodeGpu, spawnThread: spawnNodeThread, ...o, threads })
}
