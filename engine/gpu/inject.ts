// Waves added to fields on the GPU (shaders/inject.wgsl): a call's waves go up into one buffer and one
// dispatch adds each to u and u_prev of its field, one dispatch for each 64 MiB of waves, handed over to
// go with the next submit: evolve injects a generation's genomes that start together so, where each was
// a submit, two dispatches and a wait. CPU twin:
// WasmFieldBackend.inject (engine/cpu/wasm.ts); test: engine/gpu/inject.test.ts. And the perturbation's
// kick, a pattern scaled to each field's rms of u there (shaders/kick.wgsl; twin WasmFieldBackend.kick),
// and its erasure, the cells decided there from each part's sums (shaders/erase.wgsl; twin
// WasmFieldBackend.erase, erasePlan's cells): test engine/gpu/kick.test.ts.
import type { PlannedErasure } from '../detect/erase_plan.js'
import { CrystalError } from '../errors.js'
import { packStruct, wgslStruct } from '../field/params.js'
import { type Kernel, kernelModule, perDevice, pipelineOf } from './context.js'
import { ERASE_KERNELS, eraseUniform, planWords } from './erase.js'
import { SHADERS } from './shaders.gen.js'
import type { Transfers } from './transfers.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
const WG = 256
/** Waves a dispatch adds at most: its z-dimension's limit, and this many bytes of waves held for it. */
const MAX_WAVES = 65535
const MAX_BYTES = 64 << 20
/**
 * The injector's sides (GpuInjector.sides) taken in turn. Evolve's generation at the defaults injects 11
 * times with few steps between, handed over: 2 sides left 3 uploads submitting the call two before, 4
 * none. The waves' memory is at most this many uploads' (of MAX_BYTES each).
 */
export const SIDES = 4
/** shaders/kick.wgsl's uniform: cells a field, 1 / cells, 1 / the pattern's rms. */
const KICK_LAYOUT = [
  ['cells', 'u32'],
  ['inverse_cells', 'f32'],
  ['inverse_rms', 'f32'],
] as const

// kick.wgsl's entry points from one module
const kickModule = (device: GPUDevice) =>
  perDevice(device, 'kick:module', () => kernelModule(device, wgslStruct('Kick', KICK_LAYOUT), SHADERS.kick))
const kickKernel = (entry: 'scale' | 'kick'): Kernel => ({
  key: `kick:${entry}`,
  describe: (device) => ({ layout: 'auto', compute: { module: kickModule(device), entryPoint: entry } }),
})

/** The injector's kernels (context.ts Kernel), made once a device: the waves' add, the kick's two. */
export const INJECT_KERNELS = {
  inject: {
    key: 'inject:inject',
    describe: (device: GPUDevice): GPUComputePipelineDescriptor => ({
      layout: 'auto',
      compute: { module: kernelModule(device, wgslStruct('Inject', [['cells', 'u32']]), SHADERS.inject), entryPoint: 'inject' },
    }),
  },
  scale: kickKernel('scale'),
  kick: kickKernel('kick'),
} satisfies Record<string, Kernel>

/**
 * The buffers one injection or kick writes from the host or binds: the waves of a dispatch
 * ([wave][cell]) and where each goes, each made for the largest dispatch so far; the kick's scales, one
 * a field, and its uniform.
 */
interface Side {
  waves?: GPUBuffer
  targets?: GPUBuffer
  scales?: GPUBuffer
  kickUniform?: GPUBuffer
  eraseUniform?: GPUBuffer
}

export class GpuInjector {
  private readonly cells: number
  private readonly uniform: GPUBuffer
  /**
   * SIDES sides taken in turn, one an upload: a call's waves and targets go up where the last calls'
   * (handed over, not yet submitted) are not read, so they do not submit them (with one, 8 of evolve's
   * 32 submits a generation at the defaults did). Work still waiting on the side taken goes first.
   */
  private readonly sides: Side[] = Array.from({ length: SIDES }, () => ({}))
  private turn = 0
  /** Where upload lays the waves side by side, made for the largest upload so far. */
  private host?: Float32Array

  constructor(
    private readonly device: GPUDevice,
    private readonly n: number,
    private readonly transfers: Transfers,
  ) {
    this.cells = n * n
    this.uniform = device.createBuffer({ size: 16, usage: UNIFORM })
    transfers.write(this.uniform, 0, new Uint32Array([this.cells, 0, 0, 0]))
  }

  /** Waves one dispatch adds at most at this size. */
  get perDispatch(): number {
    return Math.max(1, Math.min(MAX_WAVES, Math.floor(MAX_BYTES / (this.cells * 4))))
  }

  /**
   * The waves (n*n each, at most perDispatch) sent up into the buffer a dispatch reads them from: copied
   * side by side into memory of the injector's own, then one write. A write of each took a copy of each
   * (evolve's waves are on shared memory, which Dawn's binding does not take: Transfers.write), 2,000
   * writes and 74 MB of garbage a generation at population 1,000, N = 96.
   */
  upload(waves: readonly Float32Array[]): GPUBuffer {
    const floats = waves.length * this.cells
    this.turn = (this.turn + 1) % this.sides.length
    const side = this.side
    const buffer = (side.waves = this.transfers.room(side.waves, floats * 4, STORAGE))
    if (!this.host || this.host.length < floats) this.host = new Float32Array(floats)
    waves.forEach((w, k) => this.host!.set(w.subarray(0, this.cells), k * this.cells))
    this.transfers.write(buffer, 0, this.host.subarray(0, floats))
    return buffer
  }

  /**
   * Encodes adding wave k of `src` ([wave][cell]) to u (`cur`) and u_prev (`prev`) of fields[k]; each
   * field once (distinctFields), or two adds to one field would race. `src` is upload's buffer or one
   * holding a single wave. Returns the buffers it binds (what a submit handed over uses).
   */
  encode(pass: GPUComputePassEncoder, src: GPUBuffer, fields: readonly number[], cur: GPUBuffer, prev: GPUBuffer): GPUBuffer[] {
    const targets = this.targets(Uint32Array.from(fields))
    const pipeline = pipelineOf(this.device, INJECT_KERNELS.inject)
    const buffers = [this.uniform, src, targets, cur, prev]
    pass.setPipeline(pipeline)
    pass.setBindGroup(
      0,
      this.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
      }),
    )
    this.transfers.dispatch(pass, ...spread(Math.ceil(this.cells / WG)), fields.length)
    return buffers
  }

  /**
   * Encodes the perturbation's kick (shaders/kick.wgsl): `pattern` (a buffer holding one wave) times
   * each listed field's rms of u times `inverseRms` added to u (`cur`) and u_prev (`prev`) of that
   * field; each field once. Returns the buffers it binds.
   */
  encodeKick(
    pass: GPUComputePassEncoder,
    pattern: GPUBuffer,
    fields: readonly number[],
    inverseRms: number,
    cur: GPUBuffer,
    prev: GPUBuffer,
  ): GPUBuffer[] {
    const side = this.side
    const targets = this.targets(Uint32Array.from(fields))
    const scales = (side.scales = this.transfers.room(side.scales, fields.length * 4, STORAGE))
    const uniform = this.kickUniform({ cells: this.cells, inverse_cells: 1 / this.cells, inverse_rms: inverseRms })
    const buffers = [uniform, pattern, targets, scales, cur, prev]
    // the scales first, from u as it is, then the adds
    this.run(pass, INJECT_KERNELS.scale, buffers, [0, 2, 3, 4], [fields.length, 1, 1])
    this.run(pass, INJECT_KERNELS.kick, buffers, [0, 1, 2, 3, 4, 5], [...spread(Math.ceil(this.cells / WG)), fields.length])
    return buffers
  }

  /**
   * Encodes the perturbation's erasure (shaders/erase.wgsl): u (`cur`) and u_prev (`prev`) of each
   * plan's field set to 0 at the cells its sums erase, a dispatch's z a plan (at most 65,535, an
   * engine's fields). Returns the buffers it binds.
   */
  encodeErase(pass: GPUComputePassEncoder, plans: readonly PlannedErasure[], cur: GPUBuffer, prev: GPUBuffer): GPUBuffer[] {
    const uniform = (this.side.eraseUniform ??= this.device.createBuffer({ size: 16, usage: UNIFORM }))
    this.transfers.write(uniform, 0, eraseUniform(this.n))
    const buffers = [uniform, this.targets(planWords(plans)), cur, prev]
    this.run(pass, ERASE_KERNELS.erase, buffers, [0, 1, 2, 3], [...spread(Math.ceil(this.cells / WG)), plans.length])
    return buffers
  }

  /** `list` written into this side's targets buffer (the kick's fields, the erasure's plans). */
  private targets(list: Uint32Array): GPUBuffer {
    const side = this.side
    const targets = (side.targets = this.transfers.room(side.targets, list.byteLength, STORAGE))
    this.transfers.write(targets, 0, list)
    return targets
  }

  /** shaders/kick.wgsl's uniform, as `values` say (KICK_LAYOUT), written into this side's. */
  private kickUniform(values: Record<string, number>): GPUBuffer {
    const uniform = (this.side.kickUniform ??= this.device.createBuffer({ size: 16, usage: UNIFORM }))
    const bytes = new ArrayBuffer(16)
    packStruct(KICK_LAYOUT, values, bytes)
    this.transfers.write(uniform, 0, bytes)
    return uniform
  }

  /** `kernel` over `groups` workgroups (x, y, z), bound to `buffers` by binding number. */
  private run(
    pass: GPUComputePassEncoder,
    kernel: Kernel,
    buffers: readonly GPUBuffer[],
    bindings: readonly number[],
    [x, y, z]: readonly number[],
  ): void {
    const pipeline = pipelineOf(this.device, kernel)
    pass.setPipeline(pipeline)
    const entries = bindings.map((binding) => ({ binding, resource: { buffer: buffers[binding]! } }))
    pass.setBindGroup(0, this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }))
    this.transfers.dispatch(pass, x, y, z)
  }

  /** The side the last upload took (an encode without one, the server's write, takes it too). */
  private get side(): Side {
    return this.sides[this.turn]
  }

  destroy(): void {
    const held = this.sides.flatMap((s) => [s.waves, s.targets, s.scales, s.kickUniform, s.eraseUniform])
    for (const b of [...held, this.uniform]) if (b) this.transfers.destroy(b)
  }
}

/** Throws unless every field is listed once: one dispatch's adds to a field listed twice would race. */
export function distinctFields(fields: readonly number[]): void {
  if (new Set(fields).size !== fields.length)
    throw new CrystalError('bad_argument', `one injection lists a field twice (${fields.join(', ')}): list each field once`)
}

/** `groups` workgroups as x and y of a dispatch: past 65,535 on a second row (the kernels' 2D grid). */
function spread(groups: number): [number, number] {
  return [Math.min(groups, 65535), Math.ceil(groups / 65535)]
}
