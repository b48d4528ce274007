// The GPU backend: shaders/field_step.wgsl and shaders/reduce.wgsl driven through WebGPU, in a
// browser tab (navigator.gpu) or in Node (Dawn's `webgpu`). Many steps go into one submit; the
// per-step uniforms (the noise key changes every step) sit in 256-byte slots of one buffer and are
// picked by dynamic offset. Each step writes its tiles' ledger terms to a ring of slots that one
// fold dispatch adds into the books every few steps; the host never waits between submits of a
// step(n), and timeline samples (5 floats per field) come back with the last ones. The dream
// (./dream.ts) and recall's sweep (./adjoint.ts) run here too, and every transfer is counted.
import type { PlannedErasure } from '../detect/erase_plan.js'
import { SOURCE_RADIUS_CELLS, textParts3 } from '../encode/text.js'
import type { Text3 } from '../encode/text3.js'
import { CrystalError } from '../errors.js'
import {
  fieldsWithin,
  type AdjointRunner,
  type DeviceMask,
  type FieldBackend,
  type KernelWork,
  type LedgerSample,
  type StepRequest,
} from '../field/backend.js'
import type { FieldMotion } from '../field/motion.js'
import { lowbias32, noiseKey } from '../field/noise.js'
import {
  packStruct,
  REDUCE_PARAM_LAYOUT,
  STEP_PARAM_LAYOUT,
  STEPS_PER_DISPATCH,
  stepGroups,
  stepRows,
  TILE,
  requestTable,
  sameDraws,
  wgslStruct,
  type StepParams,
} from '../field/params.js'
import { ADJOINT_KERNELS, keepWritten, openSweep, releasePatterns } from './adjoint.js'
import { DREAM_KERNELS, GpuDreamOps } from './dream.js'
import { ENCODE_KERNELS, GpuEncoder3 } from './encode3.js'
import { distinctFields, GpuInjector, INJECT_KERNELS } from './inject.js'
import { ERASE_KERNELS } from './erase.js'
import { GpuMotion, MOTION_KERNELS } from './motion.js'
import { GpuLabeller } from './components.js'
import { GpuRecorder, RECORD_KERNELS } from './record.js'
import { GpuHeldSums } from './sums.js'
import {
  compileAhead,
  compiling,
  fieldStepModule,
  fieldStepsModule,
  forgetKernels,
  type GpuContext,
  type Kernel,
  madeOn,
  onDeviceError,
  perDevice,
  pipelineOf,
} from './context.js'
import { SHADERS } from './shaders.gen.js'
import { SlotRing, Transfers } from './transfers.js'

const SLOT = 256 // minUniformBufferOffsetAlignment's largest allowed value
const MAX_STEPS_PER_SUBMIT = 256
/** The step's uniform block's bytes, and where the members it sets per step sit in it. */
const STEP_BYTES = STEP_PARAM_LAYOUT.length * 4
const STEP_WORD = Object.fromEntries(
  (['noise_key', 'ledger_slot', 'energy_at', 'key_1', 'key_2', 'key_3', 'step'] as const).map((k) => [
    k,
    4 * STEP_PARAM_LAYOUT.findIndex(([name]) => name === k),
  ]),
) as Record<'noise_key' | 'ledger_slot' | 'energy_at' | 'key_1' | 'key_2' | 'key_3' | 'step', number>
/** The keys of a several-step dispatch's later steps (shaders/field_steps.wgsl), in step order. */
const LATER_KEYS = [STEP_WORD.key_1, STEP_WORD.key_2, STEP_WORD.key_3]
const SAMPLE_COLUMNS = 5 // energy, bulk, boundary, saturation, noise
/** Entries a workgroup of shaders/reduce.wgsl's sum_chunks adds: longer rows are summed in two passes. */
const CHUNK = 2048
/** A sample's energy per tile: how many tiles a field, and the reduce bind groups that sum them (into the samples, into chunks). */
interface SampleEnergy {
  len: number
  sum: GPUBindGroup
  chunk: GPUBindGroup
}
/** Reduce uniform slots a timeline sample takes: the two first passes of its sums and the second. */
const SAMPLE_SLOTS = 3
/** The kernels that bind the field's states: one step, STEPS_PER_DISPATCH steps, a state's energy. */
const STATE_KINDS = ['step', 'steps', 'energy'] as const
type StateKind = (typeof STATE_KINDS)[number]
/** A kernel's bind group from the current (u_prev, u), and the (u_prev, u) it leaves current. */
interface StateGroup {
  group: GPUBindGroup
  next: readonly [number, number]
}
/** The ring of per-step tile sums: at most this many bytes (N = 2048, one field: 64 steps a fold). */
const RING_BYTES = 16 << 20
/** Runs of steps (without samples) at least this long are submitted at once; shorter ones go with the work after them. */
const SUBMIT_AT_ONCE = 64
/** Submits of a step(n) queued ahead of the one whose samples the host is waiting for. */
const SUBMITS_AHEAD = 2

/** The bytes of one step's four ledger terms per step tile of every field: a slot of the ring, and the books' size. */
function ledgerBytesOf(n: number, fields: number): number {
  const [tx, ty] = stepGroups(n)
  return 4 * fields * tx * ty * 4
}

/** The ring's slots, one a step's tile sums: as many as `ringBytes` holds, from 1 to a submit's steps. */
function ringSlotsOf(n: number, fields: number, ringBytes: number): number {
  return Math.max(1, Math.min(MAX_STEPS_PER_SUBMIT, Math.floor(ringBytes / ledgerBytesOf(n, fields))))
}

// The spec's flag values, so this module loads before Dawn has defined the GPU* globals.
const U = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const
const STORAGE = U.STORAGE | U.COPY_SRC | U.COPY_DST
const COMPUTE_STAGE = 0x4

export class GpuFieldBackend implements FieldBackend, GpuContext {
  readonly kind = 'gpu' as const
  readonly transfers: Transfers
  readonly dream: GpuDreamOps
  readonly recorder: GpuRecorder
  readonly held: GpuHeldSums
  readonly sumRows: { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout }
  /** The step without samples, for recall to rerun a path (GpuContext). */
  get fieldStep(): { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout; draws: GPUBuffer } {
    return { pipeline: this.stepKernel(false), layout: this.stepLayout, draws: this.ownDraws }
  }
  private readonly potentialPipeline: GPUComputePipeline
  private readonly masks = new Map<number, GPUBuffer>()
  private nextMask = 1
  /** TILE x TILE tiles a field (the energy's and potential's), and their workgroups a side. */
  private readonly tiles: number
  private readonly groups: number
  /** The step's workgroups along x and y (STEP_TILE), and so the tiles of a field's books. */
  private readonly stepDispatch: [number, number]
  private readonly ledgerTiles: number
  private readonly bufs: GPUBuffer[]
  private readonly ledgerBuf: GPUBuffer
  private readonly ledgerComp: GPUBuffer
  /**
   * Ring of per-step tile sums, [slot][field][tile][column], folded into ledgerBuf by foldPipeline;
   * after it (at `energyAt` bytes), the energy per step tile a step takes for a timeline sample.
   */
  private readonly tileSums: GPUBuffer
  private readonly energyAt: number
  private readonly ringSlots: number
  private readonly foldPipeline: GPUComputePipeline
  private readonly foldGroup: GPUBindGroup
  private readonly partials: GPUBuffer
  private readonly samples: GPUBuffer
  private readonly wave: GPUBuffer
  /** The step's table (params.ts stepTable), as the step kernels read it; `drawsHeld` what it holds. */
  private readonly draws: GPUBuffer
  private drawsHeld: Uint32Array | undefined
  /** One field drawing its own: recall's rerun of a path binds it (fieldStep). */
  private readonly ownDraws: GPUBuffer
  private readonly stepUniforms: GPUBuffer
  private readonly reduceUniforms: GPUBuffer
  private readonly stepLayout: GPUBindGroupLayout
  /** The step kernels this backend has used (stepKernel): with samples, and for steps without. */
  private readonly stepKernels: { sampled?: GPUComputePipeline; plain?: GPUComputePipeline; several?: GPUComputePipeline } = {}
  private readonly energyPipeline: GPUComputePipeline
  private readonly sumPipeline: GPUComputePipeline
  /** What a kernel binds from the current states (u_prev, u) and the states it leaves current (statesOf). */
  private readonly statesOf: (kind: StateKind, current: readonly [number, number]) => StateGroup
  /** Steps a dispatch where a run samples no timeline: 1, or STEPS_PER_DISPATCH (shaders/field_steps.wgsl). */
  readonly stepsPerDispatch: number
  /** Where a sample's energy per tile lies: the energy pass's (TILE x TILE tiles) or the next step's (step tiles). */
  private readonly passEnergy: SampleEnergy
  private readonly stepEnergy: SampleEnergy
  private readonly sumLedger: GPUBindGroup
  /** A timeline sample's first passes where a row of tiles is longer than a chunk: into `chunkSums`, then summed from it. */
  private readonly chunks: number
  private readonly chunkSums: GPUBuffer
  private readonly chunkLedger: GPUBindGroup
  private readonly sumChunks: GPUBindGroup
  private readonly chunkPipeline: GPUComputePipeline
  private readonly injector: GpuInjector
  private encoder3?: GpuEncoder3
  private motionOf?: GpuMotion
  /** bufs[current[0]] is u_prev, bufs[current[1]] is u; a step writes a buffer that is neither (3 buffers, 4 for several steps a dispatch). */
  private current: readonly [number, number] = [0, 1]
  /** The submits counted when keepUp last waited on the device. */
  private keptUpTo = -1
  /** The step's and the reduction's uniform slots, a run's in turn (a run handed over keeps its own). */
  private readonly slotRings = { step: new SlotRing(MAX_STEPS_PER_SUBMIT), reduce: new SlotRing((SAMPLE_SLOTS + 1) * MAX_STEPS_PER_SUBMIT) }
  /** The ends of the latest submits, oldest first (keepUp). */
  private readonly unseen: Promise<void>[] = []
  private failed: string | undefined
  private readonly stopListening: () => void

  /**
   * Builds the backend, turning a validation failure into an error rather than a later silent one. The
   * device may be shared (engine/gpu/device.ts keptDevice): the backend frees its own buffers, never the device.
   */
  static async create(
    device: GPUDevice,
    n: number,
    fields: number,
    description: string,
    {
      ringBytes = RING_BYTES,
      bindingBytes = device.limits.maxStorageBufferBindingSize,
      rows = stepRows(n * n * fields),
      sampling = true,
      stepsPerDispatch = 1,
    }: { ringBytes?: number; bindingBytes?: number; rows?: number; sampling?: boolean; stepsPerDispatch?: number } = {},
  ): Promise<GpuFieldBackend> {
    // the kernels compile off this thread (a first step's is 6 s of SwiftShader's), their modules in scopes of their own
    if (stepsPerDispatch !== 1 && stepsPerDispatch !== STEPS_PER_DISPATCH)
      throw new CrystalError('bad_argument', `steps a dispatch: 1 or ${STEPS_PER_DISPATCH}, got ${stepsPerDispatch}`)
    // every kernel binds a state whole: say what fits, where Dawn would name a buffer's size alone
    const room = Math.min(device.limits.maxBufferSize, device.limits.maxStorageBufferBindingSize)
    if (n * n * fields * 4 > room) {
      const most = Math.floor(room / (n * n * 4))
      throw new CrystalError(
        'backend_unavailable',
        `${fields} fields of ${n} x ${n} cells take ${n * n * fields * 4} bytes a state, more than a buffer holds on ${description} ` +
          `(${room} bytes): at most ${most} fields at this size (evolve runs up to 3 a genome: --population ${Math.floor(most / 3)} at most)`,
      )
    }
    // a dispatch's steps store their tile sums into consecutive slots of the ring: one a dispatch where it holds fewer
    const steps = ringSlotsOf(n, fields, ringBytes) >= stepsPerDispatch ? stepsPerDispatch : 1
    const kernels = backendKernels(rows)
    const own = [stepFor(device, rows, sampling), kernels.energy, kernels.potential, kernels.sum, kernels.fold, kernels.chunks]
    if (steps > 1) own.push(kernels.steps)
    const [, modules] = scoped(device, () => compileAhead(device, own))
    // awaited below unless the constructor throws
    modules.catch(() => {})
    const compiled = compiling(device, own)
    if (compiled !== undefined) await compiled
    const [backend, scopes] = scoped(
      device,
      () => new GpuFieldBackend(device, n, fields, description, ringBytes, bindingBytes, rows, sampling, steps),
    )
    const [memory, validation] = await scopes
    const [moduleMemory, moduleValidation] = await modules
    // the modules' first: a module that failed makes the constructor's pipelines fail after it
    const error = moduleMemory ?? moduleValidation ?? memory ?? validation
    if (error) {
      backend.destroy()
      // a kernel that failed to build is not kept for the next engine
      forgetKernels(device)
      throw new CrystalError('backend_unavailable', `the GPU backend could not be set up on ${description}: ${error.message}`)
    }
    return backend
  }

  private constructor(
    readonly device: GPUDevice,
    readonly n: number,
    readonly fields: number,
    readonly description: string,
    ringBytes: number,
    readonly bindingBytes: number,
    private readonly rows: number,
    sampling: boolean,
    stepsPerDispatch: number,
  ) {
    this.stopListening = onDeviceError(device, (message) => void (this.failed ??= message))
    this.transfers = new Transfers(device)
    this.groups = Math.ceil(n / TILE)
    this.tiles = this.groups * this.groups
    this.stepDispatch = stepGroups(n)
    this.ledgerTiles = this.stepDispatch[0] * this.stepDispatch[1]
    const cells = n * n * fields
    const buffer = (size: number, usage: number) => device.createBuffer({ size: Math.max(16, Math.ceil(size / 4) * 4), usage })
    const slotBytes = ledgerBytesOf(n, fields)
    this.ringSlots = ringSlotsOf(n, fields, ringBytes)
    this.stepsPerDispatch = stepsPerDispatch
    // a fourth state where a dispatch takes several steps: its tiles' halos are read from the two it starts from
    this.bufs = [...Array(stepsPerDispatch > 1 ? 4 : 3)].map(() => buffer(cells * 4, STORAGE))
    // ledger sums and their Kahan compensations, each [column][field][tile]
    this.ledgerBuf = buffer(slotBytes, STORAGE)
    this.ledgerComp = buffer(slotBytes, STORAGE)
    const align = device.limits.minStorageBufferOffsetAlignment
    this.energyAt = Math.ceil((this.ringSlots * slotBytes) / align) * align
    this.tileSums = buffer(this.energyAt + fields * this.ledgerTiles * 4, STORAGE)
    this.partials = buffer(fields * this.tiles * 4, STORAGE)
    this.samples = buffer(MAX_STEPS_PER_SUBMIT * SAMPLE_COLUMNS * fields * 4, STORAGE)
    this.wave = buffer(n * n * 4, STORAGE)
    this.draws = buffer(2 * fields * 4, STORAGE)
    this.ownDraws = buffer(8, STORAGE)
    this.stepUniforms = buffer(MAX_STEPS_PER_SUBMIT * SLOT, U.UNIFORM | U.COPY_DST)
    // SAMPLE_SLOTS per timeline sample, then one per fold
    this.reduceUniforms = buffer((SAMPLE_SLOTS + 1) * MAX_STEPS_PER_SUBMIT * SLOT, U.UNIFORM | U.COPY_DST)
    this.chunks = Math.ceil(Math.max(this.tiles, this.ledgerTiles) / CHUNK)
    this.chunkSums = buffer(SAMPLE_COLUMNS * fields * this.chunks * 4, STORAGE)

    const layouts = backendLayouts(device)
    const { step: stepLayout, energy: energyLayout, reduce: reduceLayout, fold: foldLayout } = layouts
    this.stepLayout = stepLayout
    // compiled ahead by create where it could (off this thread); compiled here otherwise, inside its error scopes
    this.stepKernel(sampling)
    const kernels = backendKernels(rows)
    this.energyPipeline = pipelineOf(device, kernels.energy)
    this.potentialPipeline = pipelineOf(device, kernels.potential)
    this.sumPipeline = pipelineOf(device, kernels.sum)
    this.foldPipeline = pipelineOf(device, kernels.fold)
    this.chunkPipeline = pipelineOf(device, kernels.chunks)
    this.sumRows = { pipeline: this.sumPipeline, layout: reduceLayout }

    const uniform = (buf: GPUBuffer, size: number) => ({ binding: 0, resource: { buffer: buf, size } })
    const stepUniform = uniform(this.stepUniforms, STEP_PARAM_LAYOUT.length * 4)
    const reduceUniform = uniform(this.reduceUniforms, 16)
    const res = (binding: number, buf: GPUBuffer, offset = 0, size?: number) => ({ binding, resource: { buffer: buf, offset, size } })
    // u_prev, u, then what the kernel writes: a step's u_next; the several steps' last two states
    const stateBindings = { step: [1, 2, 3], steps: [1, 2, 3, 5], energy: [1, 2] }
    const sums = { step: this.tileSums, steps: this.tileSums, energy: this.partials }
    // made as each (kind, u_prev, u) first occurs, then looked up: the defaults' evolve dispatches some 600 times a generation
    const table = new Map<number, StateGroup>()
    const count = this.bufs.length
    this.statesOf = (kind, [prev, u]) => {
      const key = (STATE_KINDS.indexOf(kind) * count + prev) * count + u
      let entry = table.get(key)
      if (!entry) {
        const free = [...this.bufs.keys()].filter((b) => b !== prev && b !== u)
        const bound = [prev, u, ...free].slice(0, stateBindings[kind].length)
        const states = bound.map((b, i) => res(stateBindings[kind][i], this.bufs[b]))
        const draws = kind === 'energy' ? [] : [res(6, this.draws)]
        const group = device.createBindGroup({ layout: layouts[kind], entries: [stepUniform, ...states, res(4, sums[kind]), ...draws] })
        const next: [number, number] = kind === 'steps' ? [free[0], free[1]] : kind === 'step' ? [u, free[0]] : [prev, u]
        entry = { group, next }
        table.set(key, entry)
      }
      return entry
    }
    // reduce.wgsl's row sums: src (binding 1) into dst (binding 2)
    const reduceGroup = (src: GPUBuffer, dst: GPUBuffer, offset = 0) =>
      device.createBindGroup({ layout: reduceLayout, entries: [reduceUniform, res(1, src, offset), res(2, dst)] })
    this.passEnergy = {
      len: this.tiles,
      sum: reduceGroup(this.partials, this.samples),
      chunk: reduceGroup(this.partials, this.chunkSums),
    }
    this.stepEnergy = {
      len: this.ledgerTiles,
      sum: reduceGroup(this.tileSums, this.samples, this.energyAt),
      chunk: reduceGroup(this.tileSums, this.chunkSums, this.energyAt),
    }
    this.sumLedger = reduceGroup(this.ledgerBuf, this.samples)
    this.chunkLedger = reduceGroup(this.ledgerBuf, this.chunkSums)
    this.sumChunks = reduceGroup(this.chunkSums, this.samples)
    this.foldGroup = device.createBindGroup({
      layout: foldLayout,
      entries: [reduceUniform, res(1, this.tileSums), res(2, this.ledgerBuf), res(3, this.ledgerComp)],
    })
    this.injector = new GpuInjector(device, n, this.transfers)
    this.dream = new GpuDreamOps(this)
    this.recorder = new GpuRecorder(this, () => ({ sums: this.dream.sums(), taken: this.dream.taken }))
    this.held = new GpuHeldSums(this, this.ledgerBuf, this.ledgerTiles, {
      energy: this.energyPipeline,
      potential: this.potentialPipeline,
      layout: energyLayout,
    })
  }

  check(): void {
    if (this.failed) throw new CrystalError('backend_unavailable', `the GPU reported an error: ${this.failed}`)
  }

  failure(): string | undefined {
    return this.failed
  }

  state(): { u: GPUBuffer; prev: GPUBuffer } {
    return { u: this.bufs[this.current[1]], prev: this.bufs[this.current[0]] }
  }

  keepMask(buffer: GPUBuffer): DeviceMask {
    const id = this.nextMask++
    this.masks.set(id, buffer)
    return { device_mask: id }
  }

  mask(m: DeviceMask): GPUBuffer {
    const buffer = this.masks.get(m.device_mask)
    if (!buffer) throw new CrystalError('bad_argument', `device mask ${m.device_mask} is not held by this backend`)
    return buffer
  }

  snapshot(field: number): DeviceMask {
    const bytes = this.n * this.n * 4
    const copy = this.device.createBuffer({ size: 2 * bytes, usage: 0x80 | 0x4 | 0x8 }) // storage, copy source and destination
    const { u, prev } = this.state()
    const encoder = this.device.createCommandEncoder()
    encoder.copyBufferToBuffer(u, field * bytes, copy, 0, bytes)
    encoder.copyBufferToBuffer(prev, field * bytes, copy, bytes, bytes)
    // with the work after it (a write's held sums, the steps): the copy is made before any later step
    const from = { offset: field * bytes, size: bytes }
    this.transfers.submitWithNext(encoder, [{ buffer: u, ...from }, { buffer: prev, ...from }, copy])
    return this.keepMask(copy)
  }

  releaseMask(m: DeviceMask): void {
    const mask = this.masks.get(m.device_mask)
    // a dream's edit handed over may copy into it still
    if (mask) this.transfers.destroy(mask)
    this.masks.delete(m.device_mask)
  }

  adjoint(...args: Parameters<NonNullable<FieldBackend['adjoint']>>): Promise<AdjointRunner> {
    return openSweep(
      this,
      (texts, into) =>
        this.encodeTexts(
          texts.map((t) => textParts3(t)),
          into,
        ),
      ...args,
    )
  }

  /**
   * The step kernel for steps that may take a timeline sample (`sampled`), or for steps that take none.
   * The whole kernel (SAMPLED) takes either, to the same bits, so a device that has it compiles no other:
   * evolve's batches (no timeline) compile the step without samples alone, a field with a timeline opened
   * first the whole kernel alone; an engine without a timeline opened before one with compiles both.
   */
  /** shaders/field_steps.wgsl's kernel, STEPS_PER_DISPATCH steps a dispatch (compiled ahead by create). */
  private severalSteps(): GPUComputePipeline {
    return (this.stepKernels.several ??= pipelineOf(this.device, backendKernels(this.rows).steps))
  }

  private stepKernel(sampled: boolean): GPUComputePipeline {
    // kept on the backend once had: the device's cache is cleared when another backend fails to open (forgetKernels)
    const k = this.stepKernels
    if (sampled) return (k.sampled ??= pipelineOf(this.device, backendKernels(this.rows).step(true)))
    k.plain ??= k.sampled ?? pipelineOf(this.device, stepFor(this.device, this.rows, false))
    return k.plain
  }

  async step(req: StepRequest): Promise<LedgerSample[]> {
    return (await this.run(req, false))()
  }

  /** step's run, its samples brought back by a later read (Transfers.ride): no wait for them here. */
  stepSamplesLater(req: StepRequest): Promise<() => Promise<LedgerSample[]>> {
    return this.run(req, true)
  }

  /**
   * Submits every chunk of the run without waiting in between: the host waits only for the samples
   * of the chunk SUBMITS_AHEAD back (so that the queue never runs dry), and for the last ones; `later`,
   * for none of them (they ride on a later read). Returns how to take the run's samples, in order.
   */
  private async run(req: StepRequest, later: boolean): Promise<() => Promise<LedgerSample[]>> {
    const chunks: Promise<() => Promise<LedgerSample[]>>[] = []
    const taken: (() => Promise<LedgerSample[]>)[] = []
    for (let done = 0; done < req.steps; ) {
      const steps = Math.min(MAX_STEPS_PER_SUBMIT, req.steps - done)
      chunks.push(this.submitSteps(req, req.first_step + done, steps, later))
      done += steps
      if (chunks.length > SUBMITS_AHEAD) taken.push(await chunks.shift()!)
      // submits without samples wait on nothing above: keep every run within SUBMITS_AHEAD submits of the device
      await this.keepUp()
    }
    for (const chunk of chunks) taken.push(await chunk)
    this.check()
    return async () => (await Promise.all(taken.map((samples) => samples()))).flat()
  }

  /**
   * Lets the host run ahead of the GPU by at most SUBMITS_AHEAD submits (of steps, injections, loads):
   * a wait for each call's end cost a round trip a call (evolve makes some 100 a generation, a few
   * steps each). The queue runs in order, so a later read sees the work; its errors show at the next check.
   */
  private async keepUp(): Promise<void> {
    // where nothing was submitted since the last call (a run handed over to go with later work), nothing
    // new to wait for: the host goes on encoding while the device runs what was submitted (waiting would
    // leave the device idle meanwhile). A submit anywhere since (a frame's, a sample's) counts.
    if (this.transfers.submits !== this.keptUpTo) {
      this.keptUpTo = this.transfers.submits
      // a device lost rejects these: say so at the next check rather than as an unhandled rejection
      this.unseen.push(this.device.queue.onSubmittedWorkDone().catch((e: Error) => void (this.failed ??= e.message)))
    }
    while (this.unseen.length > SUBMITS_AHEAD) await this.unseen.shift()
  }

  /**
   * Encodes and submits `steps` steps at once (all of it before the first await); resolves once their
   * samples are read back (`later`: at once, their samples to ride on a later read) to how to take them.
   */
  private async submitSteps(req: StepRequest, first: number, steps: number, later: boolean): Promise<() => Promise<LedgerSample[]>> {
    const stepBytes = new ArrayBuffer(steps * SLOT)
    const sampleSteps: number[] = []
    const reduceBytes = new ArrayBuffer((SAMPLE_SLOTS + 1) * steps * SLOT)
    const [stepBase, reduceBase] = [this.slotRings.step.claim(steps) * SLOT, this.slotRings.reduce.claim((SAMPLE_SLOTS + 1) * steps) * SLOT]
    const folds = { count: 0, pending: 0 }
    // a sample's state is the one the next step reads: that step takes its energy on the way (its tiles,
    // with the same constants), but for the run's last sample, which the energy pass takes
    let sampled = false
    const encoder = this.device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    const kernel = this.stepKernel(req.sample_interval > 0)
    // a run without a timeline takes its steps STEPS_PER_DISPATCH a dispatch where the backend does, the rest one by one
    const several = this.stepsPerDispatch > 1 && req.sample_interval === 0 ? this.severalSteps() : undefined
    let set: GPUComputePipeline | undefined
    // the constants packed once (the ring's tiles are this backend's step tiles, whatever the caller's
    // params say), each dispatch's slot a copy with its own noise keys, ring slot and energy: the defaults'
    // evolve encodes some 25,000 steps, where packing each whole took 11 us of the host's
    packStruct(STEP_PARAM_LAYOUT, { ...req.params, tiles_per_field: this.ledgerTiles, seed_key: lowbias32(req.seed) }, stepBytes)
    // the step's table, where it is not the one the kernels hold (written ahead of this submit's dispatches)
    const draws = requestTable(req.draws, this.fields, req.params.rerun_from)
    if (!sameDraws(draws, this.drawsHeld)) this.transfers.write(this.draws, 0, (this.drawsHeld = draws))
    const [slots, bytes] = [new DataView(stepBytes), new Uint8Array(stepBytes)]
    for (let i = 0; i < steps; ) {
      const take = several && i + this.stepsPerDispatch <= steps ? this.stepsPerDispatch : 1
      // a dispatch's steps go to consecutive ring slots
      if (folds.pending + take > this.ringSlots) {
        this.encodeFold(pass, folds, steps, reduceBytes, reduceBase)
        set = undefined
      }
      const at = i * SLOT
      if (i > 0) bytes.copyWithin(at, 0, STEP_BYTES)
      slots.setUint32(at + STEP_WORD.noise_key, noiseKey(req.seed, first + i) >>> 0, true)
      slots.setUint32(at + STEP_WORD.step, (first + i) >>> 0, true)
      for (let k = 1; k < take; k++) slots.setUint32(at + LATER_KEYS[k - 1], noiseKey(req.seed, first + i + k) >>> 0, true)
      slots.setUint32(at + STEP_WORD.ledger_slot, folds.pending, true)
      slots.setUint32(at + STEP_WORD.energy_at, sampled ? this.energyAt / 4 : 0, true)
      const pipeline = take > 1 ? several! : kernel
      // the pass keeps its pipeline between dispatches: set again only after a fold's or a sample's, or the other kernel's
      if (set !== pipeline) pass.setPipeline(pipeline)
      set = pipeline
      const { group, next } = this.statesOf(take > 1 ? 'steps' : 'step', this.current)
      pass.setBindGroup(0, group, [stepBase + at])
      this.current = next
      this.transfers.dispatch(pass, ...this.stepDispatch, this.fields)
      i += take
      // the books were folded at the sample and this step's terms are in the ring: summed before the next fold
      if (sampled) {
        this.encodeSample(pass, sampleSteps.length - 1, reduceBytes, reduceBase, this.stepEnergy)
        set = undefined
      }
      folds.pending += take
      const absolute = first + i
      sampled = req.sample_interval > 0 && absolute % req.sample_interval === 0
      if (sampled || folds.pending === this.ringSlots || i === steps) {
        this.encodeFold(pass, folds, steps, reduceBytes, reduceBase)
        set = undefined
      }
      if (sampled) sampleSteps.push(absolute)
      if (sampled && i === steps) {
        this.encodeEnergy(pass, stepBase + at)
        this.encodeSample(pass, sampleSteps.length - 1, reduceBytes, reduceBase, this.passEnergy)
      }
    }
    pass.end()
    this.transfers.write(this.stepUniforms, stepBase, stepBytes)
    const samplesBytes = SAMPLE_SLOTS * sampleSteps.length * SLOT
    if (sampleSteps.length) this.transfers.write(this.reduceUniforms, reduceBase, reduceBytes, 0, samplesBytes)
    const foldSlots = SAMPLE_SLOTS * steps * SLOT
    this.transfers.write(this.reduceUniforms, reduceBase + foldSlots, reduceBytes, foldSlots, folds.count * SLOT)
    if (!sampleSteps.length) {
      // a short run goes with the work after it (Transfers.submitWithNext): the window's 32 runs of 4
      // steps and their frames in a few submits. It names the state and the books' buffers and its own
      // uniform slots, which the next run's do not overlap (slotRings). Runs waiting hold distinct slots
      // of the 256, so at most 256 steps wait, as many as a run submitted at once takes (a long submit at
      // a large N could outlast a driver's watchdog)
      if (steps < SUBMIT_AT_ONCE) {
        this.transfers.submitWithNext(encoder, [
          ...this.bufs,
          this.draws,
          this.ledgerBuf,
          this.ledgerComp,
          this.tileSums,
          { buffer: this.stepUniforms, offset: stepBase, size: steps * SLOT },
          { buffer: this.reduceUniforms, offset: reduceBase + foldSlots, size: folds.count * SLOT },
        ])
      } else this.transfers.submit(encoder)
      return async () => []
    }
    const samplesOf = (values: Float32Array): LedgerSample[] =>
      sampleSteps.map((step, s) => ({
        step,
        fields: [...Array(this.fields).keys()].map((f) =>
          Float64Array.from({ length: SAMPLE_COLUMNS }, (_, c) => values[(s * SAMPLE_COLUMNS + c) * this.fields + f]),
        ),
      }))
    const sampleBytes = sampleSteps.length * SAMPLE_COLUMNS * this.fields * 4
    if (later) {
      this.transfers.submit(encoder)
      // copied aside before the next run's samples take the buffer: the copy goes first in the next submit
      const back = this.transfers.ride(this.samples, 0, sampleBytes, () => this.failed)
      return async () => {
        const values = new Float32Array(await back())
        // an error of the run's shows before its samples are taken, as where the run read its own
        this.check()
        return samplesOf(values)
      }
    }
    const samples = samplesOf(await this.readBuffer(this.samples, 0, sampleBytes, encoder))
    return async () => samples
  }

  /** Adds the ring's pending steps into the books (reduce uniform slot 2 x steps + fold number). */
  private encodeFold(
    pass: GPUComputePassEncoder,
    folds: { count: number; pending: number },
    steps: number,
    reduceBytes: ArrayBuffer,
    uniformAt: number,
  ): void {
    // written at `offset` of `reduceBytes`, which goes to `uniformAt` of the uniform buffer
    const offset = (SAMPLE_SLOTS * steps + folds.count) * SLOT
    const len = this.fields * this.ledgerTiles
    packStruct(REDUCE_PARAM_LAYOUT, { len, dst_offset: 0, count: folds.pending }, reduceBytes, offset)
    pass.setPipeline(this.foldPipeline)
    pass.setBindGroup(0, this.foldGroup, [uniformAt + offset])
    const groups = Math.ceil(len / 256)
    this.transfers.dispatch(pass, Math.min(groups, 65535), Math.ceil(groups / 65535))
    folds.count++
    folds.pending = 0
  }

  /** The energy per TILE x TILE tile of the current state into `partials` (a step's constants at `stepSlotOffset`). */
  private encodeEnergy(pass: GPUComputePassEncoder, stepSlotOffset: number): void {
    pass.setPipeline(this.energyPipeline)
    pass.setBindGroup(0, this.statesOf('energy', this.current).group, [stepSlotOffset])
    this.transfers.dispatch(pass, this.groups, this.groups, this.fields)
  }

  /**
   * A sample's energy (per tile, where `energy` says) and the ledger totals into sample slot s
   * ([column][field]): each row of tiles summed, in two passes where a row is longer than a chunk
   * (the energy's rows, then the books', into [row][chunk] of chunkSums; then every row's chunks at once).
   */
  private encodeSample(pass: GPUComputePassEncoder, s: number, reduceBytes: ArrayBuffer, uniformAt: number, energy: SampleEnergy): void {
    const base = s * SAMPLE_COLUMNS * this.fields
    // slot k is written at `slot(k)` of `reduceBytes`, which goes to `uniformAt` of the uniform buffer
    const slot = (k: number) => (SAMPLE_SLOTS * s + k) * SLOT
    if (this.chunks === 1) {
      packStruct(REDUCE_PARAM_LAYOUT, { len: energy.len, dst_offset: base }, reduceBytes, slot(0))
      packStruct(REDUCE_PARAM_LAYOUT, { len: this.ledgerTiles, dst_offset: base + this.fields }, reduceBytes, slot(1))
      pass.setPipeline(this.sumPipeline)
      pass.setBindGroup(0, energy.sum, [uniformAt + slot(0)])
      this.transfers.dispatch(pass, this.fields)
      pass.setBindGroup(0, this.sumLedger, [uniformAt + slot(1)])
      this.transfers.dispatch(pass, 4 * this.fields)
      return
    }
    packStruct(REDUCE_PARAM_LAYOUT, { len: energy.len, dst_offset: 0, count: this.chunks }, reduceBytes, slot(0))
    packStruct(
      REDUCE_PARAM_LAYOUT,
      { len: this.ledgerTiles, dst_offset: this.fields * this.chunks, count: this.chunks },
      reduceBytes,
      slot(1),
    )
    packStruct(REDUCE_PARAM_LAYOUT, { len: this.chunks, dst_offset: base }, reduceBytes, slot(2))
    pass.setPipeline(this.chunkPipeline)
    pass.setBindGroup(0, energy.chunk, [uniformAt + slot(0)])
    this.transfers.dispatch(pass, this.chunks, this.fields)
    pass.setBindGroup(0, this.chunkLedger, [uniformAt + slot(1)])
    this.transfers.dispatch(pass, this.chunks, 4 * this.fields)
    pass.setPipeline(this.sumPipeline)
    pass.setBindGroup(0, this.sumChunks, [uniformAt + slot(2)])
    this.transfers.dispatch(pass, SAMPLE_COLUMNS * this.fields)
  }

  private async readBuffer(
    src: GPUBuffer,
    offset: number,
    bytes: number,
    encoder = this.device.createCommandEncoder(),
  ): Promise<Float32Array> {
    return new Float32Array(await this.transfers.read(src, offset, bytes, encoder, () => this.failed))
  }

  async inject(fields: readonly number[], waves: readonly Float32Array[]): Promise<void> {
    distinctFields(fields)
    const compiled = compiling(this.device, [INJECT_KERNELS.inject])
    if (compiled !== undefined) await compiled
    const per = this.injector.perDispatch
    for (let from = 0; from < fields.length; from += per) {
      const src = this.injector.upload(waves.slice(from, from + per))
      const encoder = this.device.createCommandEncoder()
      const pass = encoder.beginComputePass()
      const uses = this.encodeAdd(pass, src, fields.slice(from, from + per))
      pass.end()
      // with the work after it (the held sums after, the steps): the next upload's write submits it, so
      // its errors show at a later check than this call's
      this.transfers.submitWithNext(encoder, uses)
      await this.keepUp()
    }
    this.check()
  }

  async erase(plans: readonly PlannedErasure[]): Promise<void> {
    const compiled = compiling(this.device, [ERASE_KERNELS.erase])
    if (compiled !== undefined) await compiled
    const encoder = this.device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    const uses = this.injector.encodeErase(pass, plans, this.state().u, this.state().prev)
    pass.end()
    this.transfers.submitWithNext(encoder, uses)
    await this.keepUp()
    this.check()
  }

  async clear(fields: readonly number[]): Promise<void> {
    distinctFields(fields)
    const bytes = this.n * this.n * 4
    const encoder = this.device.createCommandEncoder()
    const { u, prev } = this.state()
    const uses = [u, prev].flatMap((buffer) =>
      fields.map((f) => {
        encoder.clearBuffer(buffer, f * bytes, bytes)
        return { buffer, offset: f * bytes, size: bytes }
      }),
    )
    this.transfers.submitWithNext(encoder, uses)
    await this.keepUp()
    this.check()
  }

  async kick(fields: readonly number[], pattern: Float32Array, inverseRms: number): Promise<void> {
    distinctFields(fields)
    if (fields.length > 65535) throw new CrystalError('bad_argument', `a kick takes at most 65,535 fields at once, got ${fields.length}`)
    const compiled = compiling(this.device, [INJECT_KERNELS.scale, INJECT_KERNELS.kick])
    if (compiled !== undefined) await compiled
    const src = this.injector.upload([pattern])
    const encoder = this.device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    const uses = this.injector.encodeKick(pass, src, fields, inverseRms, this.state().u, this.state().prev)
    pass.end()
    this.transfers.submitWithNext(encoder, uses)
    await this.keepUp()
    this.check()
  }

  compileAhead(work: readonly KernelWork[]): void {
    const [d, r, k, a] = [DREAM_KERNELS, RECORD_KERNELS, INJECT_KERNELS, ADJOINT_KERNELS]
    const write = [...Object.values(ENCODE_KERNELS), k.inject]
    // in the order first used (a generation's, a server's first write, recall and dream): Dawn compiles them one at a time
    const kernels: Record<KernelWork, Kernel[]> = {
      inject: [k.inject],
      dream: [d.accumulate, d.histogram_high, d.select_high, d.histogram_low, d.select_low, d.edit_mask, d.blur, d.apply],
      record: [d.accumulate, r.accumulate, ...GpuLabeller.kernels, r.gather, r.power_sums, r.mode_planes],
      perturb: [ERASE_KERNELS.erase, k.scale, k.kick, r.basin, ERASE_KERNELS.regrowth],
      write,
      // the question is encoded as the memories were; the sweeps past a saturating path or a scaling are rarer
      recall: [...write, a.init, a.step, a.product, a.readout],
      report: [d.preview],
      show: [MOTION_KERNELS.means],
    }
    compileAhead(
      this.device,
      work.flatMap((w) => kernels[w]),
    )
  }

  /** The waves in `src` added to u and u_prev of `fields` (./inject.ts); the buffers it binds. */
  private encodeAdd(pass: GPUComputePassEncoder, src: GPUBuffer, fields: readonly number[]): GPUBuffer[] {
    return this.injector.encode(pass, src, fields, this.state().u, this.state().prev)
  }

  /**
   * The texts' wavefronts made on the device (./encode3.ts) into the wave buffer, added to `field`
   * there, and kept on the device for recall (./adjoint.ts keepWritten).
   */
  superpose3(field: number, texts: readonly { text: string; importance: number }[], keptBytes: number): Promise<void> {
    const parts = texts.map(({ text, importance }) => textParts3(text, importance))
    return keepWritten(
      this,
      texts.map((t) => t.text),
      keptBytes,
      (into) => this.encodeTexts(parts, into, (pass) => this.encodeAdd(pass, this.wave, [field])),
    )
  }

  /** The texts' wavefronts made on the device into the buffers `into` (the wave buffer is scratch unless `then` adds it to a field). */
  private async encodeTexts(
    texts: readonly Text3[],
    into: readonly (GPUBuffer | undefined)[],
    then?: (pass: GPUComputePassEncoder) => void,
  ): Promise<void> {
    const compiled = compiling(this.device, [...Object.values(ENCODE_KERNELS), INJECT_KERNELS.inject])
    if (compiled !== undefined) await compiled
    this.encoder3 ??= new GpuEncoder3(this, this.wave, SOURCE_RADIUS_CELLS)
    await this.encoder3.encodeInto(texts, into, then)
    this.check()
  }

  async load(u: Float32Array, prev: Float32Array): Promise<void> {
    this.transfers.write(this.state().u, 0, u)
    this.transfers.write(this.state().prev, 0, prev)
    await this.keepUp()
  }

  async read(fields = [...Array(this.fields).keys()]): Promise<{ u: Float32Array; prev: Float32Array }> {
    const { u, prev } = this.state()
    const [readU, readPrev] = await this.readPlanes([u, prev], fields)
    return { u: readU, prev: readPrev }
  }

  async readU(fields = [...Array(this.fields).keys()]): Promise<Float32Array> {
    const [u] = await this.readPlanes([this.state().u], fields)
    return u
  }

  cellsLater(field: number, cells: readonly number[]): () => Promise<Float32Array> {
    fieldsWithin([field], this.fields)
    const { spans, at } = cellSpans(cells)
    const base = field * this.n * this.n
    const back = this.transfers.rideSpans(
      this.state().u,
      spans.map(([from, count]) => [(base + from) * 4, count * 4] as const),
      () => this.failed,
    )
    return async () => {
      const values = new Float32Array(await back())
      this.check()
      return Float32Array.from(at, (k) => values[k])
    }
  }

  motion(field: number, cells: readonly number[]): Promise<FieldMotion> {
    fieldsWithin([field], this.fields)
    return this.motionReader().motion(field, cells)
  }

  async patchEnergy(field: number, side: number): Promise<Float64Array> {
    fieldsWithin([field], this.fields)
    return Float64Array.from(await this.motionReader().patches(field, side))
  }

  downsampled(field: number, side: number): Promise<Float32Array> {
    fieldsWithin([field], this.fields)
    return this.motionReader().means(field, side)
  }

  private motionReader(): GpuMotion {
    this.motionOf ??= new GpuMotion(this)
    return this.motionOf
  }

  copyInto(fields: readonly number[], target: FieldBackend): boolean {
    if (!(target instanceof GpuFieldBackend) || target.device !== this.device || target.n !== this.n || target.fields !== fields.length)
      return false
    fieldsWithin([...fields], this.fields)
    const bytes = this.n * this.n * 4
    const [from, to] = [this.state(), target.state()]
    const encoder = this.device.createCommandEncoder()
    fields.forEach((field, k) => {
      encoder.copyBufferToBuffer(from.u, field * bytes, to.u, k * bytes, bytes)
      encoder.copyBufferToBuffer(from.prev, field * bytes, to.prev, k * bytes, bytes)
    })
    // one queue: the target's work handed over first, then this backend's, then the copy (submit takes
    // this one's first); whatever either queues after runs after it
    target.transfers.flush()
    this.transfers.submit(encoder)
    this.check()
    target.check()
    return true
  }

  /** The fields listed of each plane buffer, in one read (they were a read a plane, a field each where the fields were not consecutive). */
  private async readPlanes(planes: readonly GPUBuffer[], fields: number[]): Promise<Float32Array[]> {
    fieldsWithin(fields, this.fields)
    const bytes = this.n * this.n * 4
    // consecutive fields (all of them, say) as one range a buffer, else a range a field
    const ranges =
      fields.length > 1 && fields.every((f, i) => f === fields[0] + i)
        ? [[fields[0] * bytes, fields.length * bytes]]
        : fields.map((f) => [f * bytes, bytes])
    const parts = await this.transfers.readRanges(
      planes.flatMap((src) => ranges.map(([offset, size]) => ({ src, offset, bytes: size }))),
      () => this.failed,
    )
    this.check()
    const joined = (of: ArrayBuffer[]) => {
      // one range a buffer (consecutive fields, the usual read): its bytes as they came, not copied again
      if (of.length === 1) return new Float32Array(of[0])
      const out = new Float32Array((fields.length * bytes) / 4)
      of.reduce((at, part) => (out.set(new Float32Array(part), at), at + part.byteLength / 4), 0)
      return out
    }
    return planes.map((_, p) => joined(parts.slice(p * ranges.length, (p + 1) * ranges.length)))
  }

  /** Every field's energy is one dispatch on the GPU; the fields listed are picked from it. */
  async energy(params: StepParams, fields?: readonly number[]): Promise<Float64Array> {
    if (fields) fieldsWithin(fields, this.fields)
    const all = await this.energyOfAll(params)
    return fields ? Float64Array.from(fields, (f) => all[f]) : all
  }

  private energyOfAll(params: StepParams): Promise<Float64Array> {
    return this.perFieldSum(this.energyPipeline, params)
  }

  /** Every field's saturation potential: per-tile sums on the GPU, then one float per field back. */
  async potential(params: StepParams): Promise<Float64Array> {
    if (!params.nonlinearity) return new Float64Array(this.fields)
    return this.perFieldSum(this.potentialPipeline, params)
  }

  /** A per-tile kernel of field_step.wgsl (energy, potential) summed to one float per field, read back. */
  private async perFieldSum(kernel: GPUComputePipeline, params: StepParams): Promise<Float64Array> {
    const bytes = new ArrayBuffer(SLOT)
    packStruct(REDUCE_PARAM_LAYOUT, { len: this.tiles, dst_offset: 0 }, bytes)
    this.transfers.write(this.reduceUniforms, 0, bytes)
    const stepBytes = new ArrayBuffer(SLOT)
    packStruct(STEP_PARAM_LAYOUT, params, stepBytes)
    this.transfers.write(this.stepUniforms, 0, stepBytes)
    const encoder = this.device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    pass.setPipeline(kernel)
    pass.setBindGroup(0, this.statesOf('energy', this.current).group, [0])
    this.transfers.dispatch(pass, this.groups, this.groups, this.fields)
    pass.setPipeline(this.sumPipeline)
    pass.setBindGroup(0, this.passEnergy.sum, [0])
    this.transfers.dispatch(pass, this.fields)
    pass.end()
    return Float64Array.from(await this.readBuffer(this.samples, 0, this.fields * 4, encoder))
  }

  async ledger(): Promise<Float64Array> {
    const bytes = new ArrayBuffer(SLOT)
    packStruct(REDUCE_PARAM_LAYOUT, { len: this.ledgerTiles, dst_offset: 0 }, bytes)
    this.transfers.write(this.reduceUniforms, 0, bytes)
    const encoder = this.device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    pass.setPipeline(this.sumPipeline)
    pass.setBindGroup(0, this.sumLedger, [0])
    this.transfers.dispatch(pass, 4 * this.fields)
    pass.end()
    const byColumn = await this.readBuffer(this.samples, 0, 4 * this.fields * 4, encoder)
    // [column][field] on the GPU; the engine wants [field][column]
    return Float64Array.from({ length: 4 * this.fields }, (_, i) => byColumn[(i % 4) * this.fields + Math.floor(i / 4)])
  }

  /** Frees every buffer the backend holds; the device stays open for the next backend (keptDevice). */
  destroy(): void {
    this.transfers.dropDeferred()
    this.transfers.dropRides()
    this.dream.destroy()
    this.recorder.destroy()
    this.held.destroy()
    this.encoder3?.destroy()
    this.motionOf?.destroy()
    this.injector.destroy()
    releasePatterns(this)
    for (const b of this.masks.values()) b.destroy()
    this.masks.clear()
    const own = [
      ...this.bufs,
      this.ledgerBuf,
      this.ledgerComp,
      this.tileSums,
      this.partials,
      this.samples,
      this.wave,
      this.draws,
      this.ownDraws,
      this.chunkSums,
    ]
    for (const b of [...own, this.stepUniforms, this.reduceUniforms]) b.destroy()
    this.stopListening()
  }
}

/**
 * `work` run inside a validation and an out-of-memory error scope, with what the two scopes caught. Both
 * are popped at once, whether `work` threw or not: on a shared device another engine's calls must not
 * land in them.
 */
function scoped<T>(device: GPUDevice, work: () => T): [T, Promise<(GPUError | null)[]>] {
  device.pushErrorScope('validation')
  device.pushErrorScope('out-of-memory')
  const pop = () => Promise.all([device.popErrorScope(), device.popErrorScope()])
  let result: T
  try {
    result = work()
  } catch (e) {
    pop().catch(() => {})
    throw e
  }
  return [result, pop()]
}

/** The backend's bind group layouts, made once per device (context.ts perDevice). */
function backendLayouts(device: GPUDevice) {
  return perDevice(device, 'backend/layouts', () => {
    const entry = (binding: number, type: 'uniform' | 'read-only-storage' | 'storage'): GPUBindGroupLayoutEntry =>
      type === 'uniform'
        ? { binding, visibility: COMPUTE_STAGE, buffer: { type, hasDynamicOffset: true } }
        : { binding, visibility: COMPUTE_STAGE, buffer: { type } }
    const layout = (...types: ['uniform' | 'read-only-storage' | 'storage', number][]) =>
      device.createBindGroupLayout({ entries: types.map(([type, binding]) => entry(binding, type)) })
    return {
      step: layout(
        ['uniform', 0],
        ['read-only-storage', 1],
        ['read-only-storage', 2],
        ['storage', 3],
        ['storage', 4],
        ['read-only-storage', 6],
      ),
      steps: layout(
        ['uniform', 0],
        ['read-only-storage', 1],
        ['read-only-storage', 2],
        ['storage', 3],
        ['storage', 4],
        ['storage', 5],
        ['read-only-storage', 6],
      ),
      energy: layout(['uniform', 0], ['read-only-storage', 1], ['read-only-storage', 2], ['storage', 4]),
      reduce: layout(['uniform', 0], ['read-only-storage', 1], ['storage', 2]),
      fold: layout(['uniform', 0], ['read-only-storage', 1], ['storage', 2], ['storage', 3]),
    }
  })
}

function reduceModule(device: GPUDevice): GPUShaderModule {
  return perDevice(device, 'backend/reduce', () =>
    device.createShaderModule({ code: `${wgslStruct('Reduce', REDUCE_PARAM_LAYOUT)}const CHUNK: u32 = ${CHUNK}u;\n${SHADERS.reduce}` }),
  )
}

/** The backend's kernels for a step of `rows` rows an invocation (context.ts Kernel): made once per device. */
function backendKernels(rows: number) {
  const kernel = (
    key: string,
    module: (device: GPUDevice) => GPUShaderModule,
    entryPoint: string,
    layout: keyof ReturnType<typeof backendLayouts>,
    constants?: Record<string, number>,
  ): Kernel => ({
    key,
    describe: (device) => ({
      layout: device.createPipelineLayout({ bindGroupLayouts: [backendLayouts(device)[layout]] }),
      compute: { module: module(device), entryPoint, constants },
    }),
  })
  const field = (device: GPUDevice) => fieldStepModule(device, rows)
  const fieldSteps = (device: GPUDevice) => fieldStepsModule(device, rows)
  const step = (sampled: boolean) => `backend/${rows}/step/${sampled ? 'sampled' : 'plain'}`
  return {
    /** The field step, with a timeline sample's energy (SAMPLED) or without. */
    step: (sampled: boolean) => kernel(step(sampled), field, 'step', 'step', { SAMPLED: sampled ? 1 : 0 }),
    /** STEPS_PER_DISPATCH steps a dispatch, without samples (shaders/field_steps.wgsl). */
    steps: kernel(`backend/${rows}/steps`, fieldSteps, 'steps', 'steps'),
    energy: kernel(`backend/${rows}/energy`, field, 'energy', 'energy'),
    potential: kernel(`backend/${rows}/potential`, field, 'potential', 'energy'),
    // the sums do not depend on the step's rows
    sum: kernel('backend/reduce/sum_rows', reduceModule, 'sum_rows', 'reduce'),
    fold: kernel('backend/reduce/fold_ledger', reduceModule, 'fold_ledger', 'fold'),
    chunks: kernel('backend/reduce/sum_chunks', reduceModule, 'sum_chunks', 'reduce'),
  }
}

/**
 * The step kernel a backend of `sampling` uses on `device` (GpuFieldBackend.stepKernel): the whole kernel
 * where it samples or the device has it, the kernel without samples otherwise.
 */
function stepFor(device: GPUDevice, rows: number, sampling: boolean): Kernel {
  const { step } = backendKernels(rows)
  return sampling || madeOn(device, step(true).key) || compiling(device, [step(true)]) !== undefined ? step(true) : step(false)
}

/** Cells apart by at most this many are copied with those between: a copy more costs more than 256 bytes. */
const SPAN_GAP = 64

/**
 * The runs of cells a read copies for `cells` ([first cell, count] each, ascending; cells at most
 * SPAN_GAP apart share one), and where each cell listed lands among the runs' values, in the order listed.
 */
export function cellSpans(cells: readonly number[]): { spans: [number, number][]; at: Int32Array } {
  const sorted = [...new Set(cells)].sort((a, b) => a - b)
  const spans: [number, number][] = []
  const start = new Map<number, number>()
  let floats = 0
  for (const c of sorted) {
    const last = spans.at(-1)
    if (last && c - (last[0] + last[1]) < SPAN_GAP) {
      floats += c - (last[0] + last[1]) + 1
      last[1] = c - last[0] + 1
    } else {
      spans.push([c, 1])
      floats++
    }
    start.set(c, floats - 1)
  }
  return { spans, at: Int32Array.from(cells, (c) => start.get(c)!) }
}
