// A field's motion taken where it lives (shaders/motion.wgsl; the consciousness publisher's period,
// docs/consciousness.md): two dispatches and one read of 2 + 2 x (cells listed) floats, where the
// publisher read the field's whole u and u_prev back every period. CPU twin: fieldMotion
// (engine/field/motion.ts); test: engine/gpu/motion.test.ts.
import { packStruct, TILE, wgslStruct } from '../field/params.js'
import type { FieldMotion } from '../field/motion.js'
import { compiling, type GpuContext, type Kernel, kernelModule, perDevice, pipelineOf } from './context.js'
import { SHADERS } from './shaders.gen.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
/** The kernels' workgroup size. */
const WG = TILE * TILE
/**
 * First-pass workgroups at most: the second adds their sums in one workgroup. SwiftShader spends some
 * 0.3 ms a workgroup whatever its cells (N = 512: 1,024 took 350 ms, 64 took 37 ms); 64 x 256 lanes
 * still keep a GPU's memory busy at N = 2048 (256 cells a lane).
 */
const GROUPS = 64
const MOTION_LAYOUT = [
  ['base', 'u32'],
  ['cells', 'u32'],
  ['chunk', 'u32'],
  ['groups', 'u32'],
  ['count', 'u32'],
] as const

const motionModule = (device: GPUDevice) =>
  perDevice(device, 'motion:module', () => kernelModule(device, wgslStruct('Motion', MOTION_LAYOUT), SHADERS.motion))
const motionKernel = (entry: 'partials' | 'total'): Kernel => ({
  key: `motion:${entry}`,
  describe: (device) => ({ layout: 'auto', compute: { module: motionModule(device), entryPoint: entry } }),
})
export const MOTION_KERNELS = { partials: motionKernel('partials'), total: motionKernel('total') }

export class GpuMotion {
  private readonly uniform: GPUBuffer
  private readonly sums: GPUBuffer
  /** The cells listed and what comes back, each made for the longest list so far. */
  private listed?: GPUBuffer
  private out?: GPUBuffer

  constructor(private readonly gpu: GpuContext) {
    this.uniform = gpu.device.createBuffer({ size: 32, usage: UNIFORM })
    this.sums = gpu.device.createBuffer({ size: GROUPS * 8, usage: STORAGE })
  }

  /** `field`'s motion now, at `cells` (row-major, within the field): one submit and one read. */
  async measure(field: number, cells: readonly number[]): Promise<FieldMotion> {
    const { device, transfers, n } = this.gpu
    const compiled = compiling(device, Object.values(MOTION_KERNELS))
    if (compiled !== undefined) await compiled
    const area = n * n
    const groups = Math.min(GROUPS, Math.ceil(area / WG))
    const values = new ArrayBuffer(32)
    const count = cells.length
    packStruct(MOTION_LAYOUT, { base: field * area, cells: area, chunk: Math.ceil(area / groups), groups, count }, values)
    transfers.write(this.uniform, 0, values)
    this.listed = transfers.room(this.listed, count * 4, STORAGE)
    if (count) transfers.write(this.listed, 0, Uint32Array.from(cells))
    const bytes = (2 + 2 * count) * 4
    const out = (this.out = transfers.room(this.out, bytes, STORAGE))
    const buffers = [this.uniform, this.gpu.state().u, this.gpu.state().prev, this.listed, this.sums, out]
    const encoder = device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    const run = (kernel: Kernel, bindings: readonly number[], x: number) => {
      const pipeline = pipelineOf(device, kernel)
      pass.setPipeline(pipeline)
      const entries = bindings.map((binding) => ({ binding, resource: { buffer: buffers[binding] } }))
      pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }))
      transfers.dispatch(pass, x)
    }
    run(MOTION_KERNELS.partials, [0, 1, 2, 4], groups)
    run(MOTION_KERNELS.total, [0, 1, 2, 3, 4, 5], 1)
    pass.end()
    const back = new Float32Array(await transfers.read(out, 0, bytes, encoder, () => this.gpu.failure()))
    this.gpu.check()
    return { uu: back[0], vv: back[1], u: back.slice(2, 2 + count), prev: back.slice(2 + count, 2 + 2 * count) }
  }

  destroy(): void {
    for (const b of [this.uniform, this.sums, this.listed, this.out]) if (b) this.gpu.transfers.destroy(b)
  }
}
