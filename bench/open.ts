// `crystal bench open`: what opening the GPU backend costs a process, which evolve's first generation
// pays (its `open` phase: 1.10 s on the H200, docs/gpu.md). Three rounds, each on a device of its own:
// 1. the product's path: the adapter found, the device opened, then one small generation evaluated
//    (engine/discovery/evaluate.ts) while every kernel compile is timed where the code asks for it
//    (most compiled ahead, off the calling thread, since 2026-11-29);
// 2. the same kernels compiled again from their code, all asked for at once (createComputePipelineAsync);
// 3. the control of 2: the same kernels one after another (createComputePipeline), as the product does.
// Round 2 runs before round 3, so a cache the driver kept between devices could only favour the control.
import { evaluate } from '../engine/discovery/evaluate.js'
import type { BackendChoice } from '../engine/field/backend.js'
import { randomGenome } from '../engine/discovery/genome.js'
import { MaterialCatalog } from '../engine/field/materials.js'
import { findAdapter, keptDevice, openDevice } from '../engine/gpu/device.js'
import { nodeGpu } from '../engine/gpu/webgpu.node.js'
import { createNodeEngine } from '../engine/node.js'
import { rng } from '../engine/util/rng.js'

export interface KernelCompile {
  entry: string
  /** Its module, numbered in the order made (the code is kept for rounds 2 and 3). */
  module: number
  /** When it was asked for, from the device's opening. */
  at_ms: number
  /**
   * How long it took: the call, where it was compiled on the calling thread; where it was compiled ahead
   * (createComputePipelineAsync, engine/gpu/context.ts compileAhead), from the later of its asking and
   * the previous such kernel's readiness to its own (Dawn compiles them one at a time).
   */
  ms: number
  ahead: boolean
}

export interface OpenReport {
  gpu_adapter: string | null
  gpu_software: boolean
  /** requestAdapter, then requestDevice with the product's features and limits. */
  adapter_ms: number
  device_ms: number
  /** Round 1: every compile of the first generation, in order, their sum, and the calling thread's part of it. */
  compiles: KernelCompile[]
  compile_ms: number
  blocking_ms: number
  /** Round 1: the whole first generation (population 2, N = 32), compiles included, and a second one. */
  first_generation_ms: number
  second_generation_ms: number
  /** Rounds 2 and 3: the same kernels (layout 'auto') on fresh devices, at once and one after another. */
  async_wall_ms: number
  sync_wall_ms: number
  skipped: string[]
}

const GENERATION = { population: 2, size: 32 }

/** `backend`: 'cpu' skips it (there is nothing to open). */
export async function runOpenBench(say: (line: string) => void, backend: BackendChoice = 'auto'): Promise<OpenReport> {
  const gpu = backend === 'cpu' ? undefined : await nodeGpu().catch(() => undefined)
  const t0 = performance.now()
  const choice = await findAdapter(gpu)
  const adapter_ms = performance.now() - t0
  const empty = { adapter_ms, device_ms: 0, compiles: [], compile_ms: 0, blocking_ms: 0, first_generation_ms: 0, second_generation_ms: 0 }
  if (!gpu || !choice) {
    const why = backend === 'cpu' ? 'open: --backend cpu (it measures the GPU backend)' : 'open: no WebGPU adapter'
    return { gpu_adapter: null, gpu_software: false, ...empty, async_wall_ms: 0, sync_wall_ms: 0, skipped: [why] }
  }
  say(`open: round 1 on ${choice.name}: the device, then a generation of ${GENERATION.population} at N = ${GENERATION.size} ...`)
  // a device this process keeps already (`bench all` runs the others first) has its kernels: it is
  // closed, so the one timed opens and compiles anew (a lost device is forgotten, engine/gpu/device.ts)
  const before = await keptDevice(gpu)
  before?.device.destroy()
  await before?.device.lost
  const t1 = performance.now()
  const kept = await keptDevice(gpu)
  const device_ms = performance.now() - t1
  if (!kept)
    return {
      gpu_adapter: choice.name,
      gpu_software: choice.software,
      ...empty,
      async_wall_ms: 0,
      sync_wall_ms: 0,
      skipped: ['open: the adapter went away'],
    }
  const { device } = kept
  const watch = watchCompiles(device, t1)
  const { compiles } = watch
  let first_generation_ms: number
  let second_generation_ms: number
  try {
    first_generation_ms = await smallGeneration()
    second_generation_ms = await smallGeneration()
  } finally {
    watch.stop()
    device.destroy()
  }
  await device.lost
  const kernels = watch.kernels()
  const fresh = async () => openDevice((await findAdapter(gpu))!)
  say(`open: round 2, the ${kernels.length} kernels at once (createComputePipelineAsync) on a fresh device ...`)
  const async_wall_ms = await compileAll(await fresh(), kernels, true)
  say('open: round 3, the same one after another (createComputePipeline) on a fresh device ...')
  const sync_wall_ms = await compileAll(await fresh(), kernels, false)
  return {
    gpu_adapter: choice.name,
    gpu_software: choice.software,
    adapter_ms,
    device_ms,
    compiles,
    compile_ms: compiles.reduce((s, c) => s + c.ms, 0),
    blocking_ms: compiles.reduce((s, c) => s + (c.ahead ? 0 : c.ms), 0),
    first_generation_ms,
    second_generation_ms,
    async_wall_ms,
    sync_wall_ms,
    skipped: [],
  }
}

export interface Kernel {
  code: string
  entry: string
  /** The pipeline's override constants (the field step's SAMPLED). */
  constants: Record<string, number>
}

/**
 * Times every kernel `device` compiles from now on where the code asks for it (`at_ms` from `since`),
 * keeping each one's code, until `stop`: `kernels()` are then what it compiled, to compile again.
 */
export function watchCompiles(device: GPUDevice, since: number) {
  const codes: string[] = []
  const codeOf = new Map<GPUShaderModule, number>()
  const compiles: KernelCompile[] = []
  const constants: Record<string, number>[] = []
  const createModule = device.createShaderModule
  device.createShaderModule = (d) => {
    const module = createModule.call(device, d)
    codeOf.set(module, codes.push(d.code) - 1)
    return module
  }
  const createPipeline = device.createComputePipeline
  const createAsync = device.createComputePipelineAsync
  const asked = (d: GPUComputePipelineDescriptor, ahead: boolean, at_ms: number): KernelCompile => {
    constants.push({ ...d.compute.constants })
    const compile = { entry: d.compute.entryPoint ?? '', module: codeOf.get(d.compute.module) ?? -1, at_ms, ms: 0, ahead }
    compiles.push(compile)
    return compile
  }
  device.createComputePipeline = (d) => {
    const start = performance.now()
    const pipeline = createPipeline.call(device, d)
    asked(d, false, start - since).ms = performance.now() - start
    return pipeline
  }
  let lastReady = 0
  device.createComputePipelineAsync = (d) => {
    const compile = asked(d, true, performance.now() - since)
    return createAsync.call(device, d).finally(() => {
      const ready = performance.now() - since
      compile.ms = ready - Math.max(compile.at_ms, lastReady)
      lastReady = ready
    })
  }
  return {
    compiles,
    kernels: (): Kernel[] => compiles.map((c, k) => ({ code: codes[c.module], entry: c.entry, constants: constants[k] })),
    stop: () => {
      device.createShaderModule = createModule
      device.createComputePipeline = createPipeline
      device.createComputePipelineAsync = createAsync
    },
  }
}

/** A generation of GENERATION's size on the GPU backend, ms: the product's first compiles, in its order. */
export async function smallGeneration(): Promise<number> {
  const rand = rng(5)
  const genomes = Array.from({ length: GENERATION.population }, () => randomGenome(rand, { min_steps: 100, max_steps: 100 }))
  const start = performance.now()
  await evaluate(genomes, {
    size: GENERATION.size,
    material: new MaterialCatalog().get('europium_crystal'),
    seed: 1,
    open: (o) => createNodeEngine({ ...o, backend: 'gpu' }),
  })
  return performance.now() - start
}

/** Wall ms to compile `kernels` on `device` (destroyed after): all asked for at once, or one after another. */
export async function compileAll(device: GPUDevice, kernels: Kernel[], together: boolean): Promise<number> {
  const modules = new Map<string, GPUShaderModule>()
  const descriptor = ({ code, entry, constants }: Kernel): GPUComputePipelineDescriptor => {
    if (!modules.has(code)) modules.set(code, device.createShaderModule({ code }))
    return { layout: 'auto', compute: { module: modules.get(code)!, entryPoint: entry, constants } }
  }
  const start = performance.now()
  if (together) await Promise.all(kernels.map((k) => device.createComputePipelineAsync(descriptor(k))))
  else for (const k of kernels) device.createComputePipeline(descriptor(k))
  // a sync compile may still be finishing on the device's side: the wall ends when the queue is idle
  await device.queue.onSubmittedWorkDone()
  const wall = performance.now() - start
  device.destroy()
  return wall
}

export function openTable(r: OpenReport): object[] {
  const row = (what: string, ms: number) => ({ what, ms: Number(ms.toFixed(1)) })
  return [
    row('requestAdapter', r.adapter_ms),
    row('requestDevice', r.device_ms),
    ...r.compiles.map((c) =>
      row(`compile ${c.entry} (module ${c.module}, asked at ${c.at_ms.toFixed(0)} ms${c.ahead ? ', ahead' : ''})`, c.ms),
    ),
    row(`compiles of the first generation (${r.compiles.length})`, r.compile_ms),
    row('of them on the calling thread', r.blocking_ms),
    row(`first generation (population ${GENERATION.population}, N = ${GENERATION.size})`, r.first_generation_ms),
    row('second generation (the kernels kept)', r.second_generation_ms),
    row('the same kernels at once (createComputePipelineAsync)', r.async_wall_ms),
    row('the same kernels one after another (control)', r.sync_wall_ms),
  ]
}
