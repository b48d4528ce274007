// The engine in Node: Dawn's WebGPU and worker-thread CPU helpers filled in. Browser code calls
// createEngine directly with navigator.gpu.
import { availableParallelism } from 'node:os'
import { spawnNodeThread } from './cpu/threads.node.js'
import { createEngine, type Engine, type EngineOptions } from './field/engine.js'
import { nodeGpu } from './gpu/webgpu.node.js'

export function createNodeEngine(o: EngineOptions = {}): Promise<Engine> {
  return createEngine({ gpu: nodeGpu, spawnThread: spawnNodeThread, threads: availableParallelism(), ...o })
}
