// What the GPU backend shares with the kernels it drives (the dream, recall's adjoint sweep): the device,
// the transfer counts, the rotating state and the kernel-module builder. Its own file, so those parts
// import it rather than the backend that constructs them.
import type { DeviceMask } from '../field/backend.js'
import { STEP_PARAM_LAYOUT, TILE, wgslStruct } from '../field/params.js'
import { SHADERS } from './shaders.gen.js'
import type { Transfers } from './transfers.js'

/** A kernel module: its generated uniform struct, TILE, shaders/common.wgsl, then the kernel file. */
export function kernelModule(device: GPUDevice, struct: string, kernel: string, extra = ''): GPUShaderModule {
  return device.createShaderModule({ code: `${struct}const TILE: u32 = ${TILE}u;\n${extra}${SHADERS.common}\n${kernel}` })
}

/**
 * shaders/field_step.wgsl with the step's tile sum: subgroupAdd where the device was opened with
 * `subgroups` (engine/gpu/device.ts asks for it when offered), shared memory otherwise.
 */
export function fieldStepModule(device: GPUDevice): GPUShaderModule {
  const params = wgslStruct('Params', STEP_PARAM_LAYOUT)
  return device.features.has('subgroups')
    ? kernelModule(device, `enable subgroups;\n${params}`, SHADERS.field_step, SHADERS.tile_sum_subgroups)
    : kernelModule(device, params, SHADERS.field_step, SHADERS.tile_sum)
}

/** What the dream and the adjoint runner need of the backend. */
export interface GpuContext {
  readonly device: GPUDevice
  readonly transfers: Transfers
  readonly n: number
  readonly fields: number
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
  readonly fieldStep: { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout }
}
