// What the GPU backend shares with the kernels it drives (the dream, recall's adjoint sweep): the device,
// the transfer counts, the rotating state and the kernel-module builder. Its own file, so those parts
// import it rather than the backend that constructs them.
import type { DeviceMask } from '../field/backend.js'
import { STEP_PARAM_LAYOUT, STEP_TILE, STEPS_PER_DISPATCH, TILE, wgslStruct } from '../field/params.js'
import { SHADERS } from './shaders.gen.js'
import type { Transfers } from './transfers.js'

const made = new WeakMap<GPUDevice, Map<string, unknown>>()

/**
 * What `make` builds (pipelines, their layouts), once per device and `key`. A device is shared by the
 * engines opened on it (engine/gpu/device.ts keptDevice), and a pipeline is the costly part of an engine
 * to open: Dawn finds one again only while the last is alive, and never one of layout 'auto' (the field
 * step takes 8 s to compile on SwiftShader). `key` names the code, its constants and the entry points.
 */
export function perDevice<T>(device: GPUDevice, key: string, make: () => T): T {
  let byKey = made.get(device)
  if (!byKey) made.set(device, (byKey = new Map()))
  if (!byKey.has(key)) byKey.set(key, make())
  return byKey.get(key) as T
}

const listeners = new WeakMap<GPUDevice, Set<(message: string) => void>>()

/**
 * Tells `handler` of each uncaptured error on the device until the returned function is called: one
 * listener a device, however many backends share it (an EventTarget warns past ten).
 */
export function onDeviceError(device: GPUDevice, handler: (message: string) => void): () => void {
  let handlers = listeners.get(device)
  if (!handlers) {
    const set = new Set<(message: string) => void>()
    device.addEventListener('uncapturederror', (e) => {
      for (const h of set) h((e as GPUUncapturedErrorEvent).error.message)
    })
    listeners.set(device, (handlers = set))
  }
  handlers.add(handler)
  return () => void handlers.delete(handler)
}

/** The WGSL constants of a step tile (STEP_TILE in engine/field/params.ts, or another to compare). */
export function stepShape(s: { w: number; h: number; rows: number }): string {
  return `const STEP_W: u32 = ${s.w}u;\nconst STEP_H: u32 = ${s.h}u;\nconst ROWS: u32 = ${s.rows}u;\n`
}

/** What perDevice made on `device` under `key`, if it has been made. */
export function madeOn<T>(device: GPUDevice, key: string): T | undefined {
  return made.get(device)?.get(key) as T | undefined
}

/** Forgets what perDevice made on `device` (a backend whose kernels failed to build: the next one builds them anew). */
export function forgetKernels(device: GPUDevice): void {
  made.delete(device)
  // what is still compiling ahead is not kept either
  ahead.get(device)?.clear()
}

/** A compute pipeline made once a device: its perDevice key, and how to describe it on a device. */
export interface Kernel {
  readonly key: string
  describe(device: GPUDevice): GPUComputePipelineDescriptor
}

/** `kernel`'s pipeline on `device`: compiled now, on this thread, unless it was made (or compiled ahead) before. */
export function pipelineOf(device: GPUDevice, kernel: Kernel): GPUComputePipeline {
  return perDevice(device, kernel.key, () => device.createComputePipeline(kernel.describe(device)))
}

const ahead = new WeakMap<GPUDevice, Map<string, Promise<void>>>()

/**
 * Starts compiling `kernels` that are neither made nor compiling, in this order, and returns at once.
 * Dawn compiles a pipeline asked for with createComputePipelineAsync on a thread of its own, one at a
 * time, so the calling thread, the device and the detection pool go on meanwhile: a first generation
 * compiles 22 kernels, 0.5 s of the H200 box's main thread and 6.5 s of SwiftShader's asked for one
 * by one where each is first used (docs/gpu.md, "Compiling ahead"). A kernel whose compile fails is
 * compiled again where it is used (pipelineOf), which reports its error there.
 */
export function compileAhead(device: GPUDevice, kernels: readonly Kernel[]): void {
  let compiling = ahead.get(device)
  if (!compiling) ahead.set(device, (compiling = new Map()))
  const pending = compiling
  for (const kernel of kernels) {
    if (madeOn(device, kernel.key) || pending.has(kernel.key)) continue
    const done: Promise<void> = device.createComputePipelineAsync(kernel.describe(device)).then(
      (pipeline) => {
        // kept unless forgotten meanwhile (forgetKernels) or made on this thread first
        if (pending.get(kernel.key) === done) perDevice(device, kernel.key, () => pipeline)
      },
      () => {},
    )
    pending.set(kernel.key, done)
    void done.then(() => {
      if (pending.get(kernel.key) === done) pending.delete(kernel.key)
    })
  }
}

/**
 * What to wait for before using `kernels` (pipelineOf): those of them still compiling ahead, or
 * undefined where none is, so that a caller awaits only then and its work is encoded as it would be.
 */
export function compiling(device: GPUDevice, kernels: readonly Kernel[]): Promise<unknown> | undefined {
  const pending = ahead.get(device)
  if (!pending?.size) return undefined
  const waits = kernels.flatMap((k) => pending.get(k.key) ?? [])
  return waits.length ? Promise.all(waits) : undefined
}

/** A kernel module: its generated uniform struct, TILE, shaders/common.wgsl, then the kernel file. */
export function kernelModule(device: GPUDevice, struct: string, kernel: string, extra = ''): GPUShaderModule {
  return device.createShaderModule({ code: `${struct}const TILE: u32 = ${TILE}u;\n${extra}${SHADERS.common}\n${kernel}` })
}

/**
 * shaders/field_step.wgsl with the step's tile sum: subgroupAdd where the device was opened with
 * `subgroups` (engine/gpu/device.ts asks for it when offered), shared memory otherwise.
 */
export function fieldStepModule(device: GPUDevice, rows = STEP_TILE.rows): GPUShaderModule {
  return perDevice(device, `field_step/${rows}`, () => stepModule(device, rows, SHADERS.field_step))
}

/**
 * fieldStepModule's code with shaders/field_steps.wgsl after it (STEPS_PER_DISPATCH steps a dispatch):
 * a module of its own, so that the single step's stays as it was where the other is never used.
 */
export function fieldStepsModule(device: GPUDevice, rows = STEP_TILE.rows): GPUShaderModule {
  return perDevice(device, `field_steps/${rows}`, () =>
    stepModule(device, rows, `${SHADERS.field_step}\nconst STEPS: u32 = ${STEPS_PER_DISPATCH}u;\n${SHADERS.field_steps}`),
  )
}

function stepModule(device: GPUDevice, rows: number, code: string): GPUShaderModule {
  const params = wgslStruct('Params', STEP_PARAM_LAYOUT) + stepShape({ ...STEP_TILE, rows })
  return device.features.has('subgroups')
    ? kernelModule(device, `enable subgroups;\n${params}`, code, SHADERS.tile_sum_subgroups)
    : kernelModule(device, params, code, SHADERS.tile_sum)
}

/** What the dream and the adjoint runner need of the backend. */
export interface GpuContext {
  readonly device: GPUDevice
  readonly transfers: Transfers
  readonly n: number
  readonly fields: number
  /** The most bytes a kernel's storage binding shows (the device's limit, or less where a test says). */
  readonly bindingBytes: number
  /** The buffers holding u and u_prev now (they rotate every step). */
  state(): { u: GPUBuffer; prev: GPUBuffer }
  /** Throws if the device reported an error. */
  check(): void
  failure(): string | undefined
  /** Keeps a buffer as a mask the history names; `mask` finds it again. */
  keepMask(buffer: GPUBuffer): DeviceMask
  mask(m: DeviceMask): GPUBuffer
  /** shaders/reduce.wgsl's sum_rows and its layout (binding 0: a dynamic-offset uniform). */
  readonly sumRows: { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout }
  /** shaders/field_step.wgsl's step and its layout (binding 0: a dynamic-offset uniform), for recall to rerun a path. */
  readonly fieldStep: { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout; draws: GPUBuffer }
}
