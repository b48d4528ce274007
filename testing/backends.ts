// Backends for tests: the real ones. The GPU one is WebGPU on whatever adapter Dawn finds (SwiftShader
// on CI, installed by scripts/install-system-deps.sh); a machine without one fails these tests loudly.
import { accumulateAbs, meanOf } from '../engine/cpu/dream.js'
import { spawnNodeThread } from '../engine/cpu/threads.node.js'
import type { FieldBackend } from '../engine/field/backend.js'
import type { Engine, EngineOptions } from '../engine/field/engine.js'
import { selectBackend } from '../engine/backends/select.js'
import { randomPulse } from '../engine/discovery/genome.js'
import { addPulse } from '../engine/encode/pulse.js'
import { findAdapter } from '../engine/gpu/device.js'
import { nodeGpu } from '../engine/gpu/webgpu.node.js'
import { createNodeEngine } from '../engine/node.js'
import { rng } from '../engine/util/rng.js'

/**
 * The test adapter is a software one (SwiftShader on CI): there the GPU kernels give their CPU twins'
 * bits; a hardware GPU's driver fuses multiply-adds, an ulp an operation, so tests allow that there.
 */
export async function softwareGpu(): Promise<boolean> {
  return (await findAdapter(await nodeGpu()))?.software ?? true
}

/** The backend `auto` picks on this machine: the GPU where its adapter is a hardware one, else the CPU. */
export async function autoBackend(): Promise<'cpu' | 'gpu'> {
  return (await softwareGpu()) ? 'cpu' : 'gpu'
}

/** `options.stepsPerDispatch` pins what selectBackend picks by the adapter (4 on a hardware one, 1 on software). */
export async function gpuBackend(n: number, fields: number, options: { stepsPerDispatch?: number } = {}): Promise<FieldBackend> {
  return (await selectBackend({ backend: 'gpu', n, fields, gpu: nodeGpu, ...options })).backend
}

export async function cpuBackend(n: number, fields: number, threads = 1): Promise<FieldBackend> {
  return (await selectBackend({ backend: 'cpu', n, fields, threads, spawnThread: spawnNodeThread })).backend
}

export function engineOn(backend: 'gpu' | 'cpu', o: EngineOptions = {}): Promise<Engine> {
  return createNodeEngine({ backend, ...o })
}

/**
 * The control for observeStability's window: `engine` stepped `steps` in `samples` equal runs, u read
 * back after each and |u| summed and averaged here (float32, in observeStability's order).
 */
export async function meanAbsReadBack(engine: Engine, steps: number, samples: number): Promise<Float32Array> {
  const sum = new Float32Array(engine.size * engine.size * engine.fields)
  for (let done = 0; done < steps; done += steps / samples) {
    await engine.step(steps / samples)
    accumulateAbs(sum, (await engine.read()).u)
  }
  return meanOf(sum, samples)
}

/**
 * A europium engine of `fields` fields whose field f holds f + 1 random pulses, 40 steps on: what
 * evolve records a window of (the caller destroys it).
 */
export async function pulsedEngine(backend: 'gpu' | 'cpu', size: number, fields: number): Promise<Engine> {
  const engine = await engineOn(backend, { size, fields, material: 'europium_crystal', seed: 5, noise: 0.003, timeline_interval: 0 })
  const rand = rng(3)
  await engine.injectMany(
    Array.from({ length: fields }, (_, f) => {
      const wave = new Float32Array(size * size)
      for (let k = 0; k <= f; k++) addPulse(wave, size, randomPulse(rand))
      return wave
    }),
  )
  await engine.step(40)
  return engine
}

/**
 * Tells `heard` of every pipeline `device` compiles from now on, on the calling thread
 * (createComputePipeline) or ahead of its use (createComputePipelineAsync), until the returned
 * function is called.
 */
export function watchCompiles(device: GPUDevice, heard: (d: GPUComputePipelineDescriptor, ahead: boolean) => void): () => void {
  const [sync, ahead] = [device.createComputePipeline, device.createComputePipelineAsync]
  device.createComputePipeline = (d) => (heard(d, false), sync.call(device, d))
  device.createComputePipelineAsync = (d) => (heard(d, true), ahead.call(device, d))
  return () => {
    device.createComputePipeline = sync
    device.createComputePipelineAsync = ahead
  }
}
