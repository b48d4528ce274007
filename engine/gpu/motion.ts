// What the consciousness publisher reads of a field, taken where it lives (shaders/motion.wgsl;
// docs/consciousness.md): its motion every period, two dispatches and one read of 2 + 2 x (cells
// listed) floats, and its energy by patches around a dream, one dispatch and one read of side^2
// floats (64 at the publisher's 8 x 8), where the publisher read the field's whole u (and u_prev) back
// each time; and what the Observatory shows of it, u box-averaged onto side x side, one dispatch and
// one read of side^2 floats, where the server's snapshot read the whole u after every change. CPU
// twins: fieldMotion and patchEnergy (engine/field/motion.ts), downsample (engine/util/downsample.ts);
// test: engine/gpu/motion.test.ts.
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
  ['n', 'u32'],
  ['side', 'u32'],
] as const

const motionModule = (device: GPUDevice) =>
  perDevice(device, 'motion:module', () => kernelModule(device, wgslStruct('Motion', MOTION_LAYOUT), SHADERS.motion))
const motionKernel = (entry: 'partials' | 'total' | 'patches' | 'means'): Kernel => ({
  key: `motion:${entry}`,
  describe: (device) => ({ layout: 'auto', compute: { module: motionModule(device), entryPoint: entry } }),
})
export const MOTION_KERNELS = {
  partials: motionKernel('partials'),
  total: motionKernel('total'),
  patches: motionKernel('patches'),
  means: motionKernel('means'),
}

/** A kernel of shaders/motion.wgsl, the bindings it uses and its workgroups along x and y. */
type Run = [Kernel, readonly number[], number, number?]

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
  async motion(field: number, cells: readonly number[]): Promise<FieldMotion> {
    const area = this.gpu.n * this.gpu.n
    const groups = Math.min(GROUPS, Math.ceil(area / WG))
    const count = cells.length
    const back = await this.measure(
      { base: field * area, cells: area, chunk: Math.ceil(area / groups), groups, count },
      cells,
      2 + 2 * count,
      [
        [MOTION_KERNELS.partials, [0, 1, 2, 4], groups],
        [MOTION_KERNELS.total, [0, 1, 2, 3, 4, 5], 1],
      ],
    )
    return { uu: back[0], vv: back[1], u: back.slice(2, 2 + count), prev: back.slice(2 + count, 2 + 2 * count) }
  }

  /** Sum of u^2 over each of `side` x `side` patches of `field` (row-major): one workgroup a patch, one read. */
  async patches(field: number, side: number): Promise<Float32Array> {
    const { n } = this.gpu
    return this.measure({ base: field * n * n, n, side }, [], side * side, [[MOTION_KERNELS.patches, [0, 1, 5], side, side]])
  }

  /** u of `field` box-averaged onto `side` x `side` (row-major), as `downsample` averages it: one read of side^2 floats. */
  means(field: number, side: number): Promise<Float32Array> {
    const { n } = this.gpu
    const boxes = side * side
    return this.measure({ base: field * n * n, n, side }, [], boxes, [[MOTION_KERNELS.means, [0, 1, 5], Math.ceil(boxes / WG)]])
  }

  /** The uniform and the cells listed sent, `runs` dispatched, and `floats` of the output read back: one submit, one read. */
  private async measure(
    uniform: Record<string, number>,
    cells: readonly number[],
    floats: number,
    runs: readonly Run[],
  ): Promise<Float32Array> {
    const { device, transfers } = this.gpu
    const compiled = compiling(
      device,
      runs.map(([kernel]) => kernel),
    )
    if (compiled !== undefined) await compiled
    const values = new ArrayBuffer(32)
    packStruct(MOTION_LAYOUT, uniform, values)
    transfers.write(this.uniform, 0, values)
    this.listed = transfers.room(this.listed, cells.length * 4, STORAGE)
    if (cells.length) transfers.write(this.listed, 0, Uint32Array.from(cells))
    const out = (this.out = transfers.room(this.out, floats * 4, STORAGE))
    const buffers = [this.uniform, this.gpu.state().u, this.gpu.state().prev, this.listed, this.sums, out]
    const encoder = device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    for (const [kernel, bindings, x, y] of runs) {
      const pipeline = pipelineOf(device, kernel)
      pass.setPipeline(pipeline)
      const entries = bindings.map((binding) => ({ binding, resource: { buffer: buffers[binding] } }))
      pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }))
      transfers.dispatch(pass, x, y)
    }
    pass.end()
    const back = new Float32Array(await transfers.read(out, 0, floats * 4, encoder, () => this.gpu.failure()))
    this.gpu.check()
    return back
  }

  destroy(): void {
    for (const b of [this.uniform, this.sums, this.listed, this.out]) if (b) this.gpu.transfers.destroy(b)
  }
}
