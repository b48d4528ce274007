// Recall's backward sweep on the GPU (shaders/adjoint.wgsl): the covector of the live field runs
// back step by step and through the dream's masks, which stay on the device; each reading reduces
// the correlation of each pattern it lists to one float in a scores buffer (the readings' lists one
// after another), and `results` reads back only that.
// A saturating field's path is rerun here too (the field step on a scratch copy, k per step kept
// on the device), so its sweep reads back only the scores as well.
// The patterns recall keeps between questions (memories' and null patterns) stay on the device too
// (ResidentPatterns): a sweep copies them on the device and uploads only what it has not seen, the
// question's pattern. A text's pattern (a TextWave) is never on the host: the writes leave theirs
// kept here (keepWritten), and a sweep makes those it lacks with the device's encoder (one read, the
// parts' energies). Each reading's list and uniforms go up in one write a submit, not one a reading.
// CPU twin: AdjointField (engine/recall/adjoint.ts) behind CpuAdjointRunner (engine/recall/runner.ts).
import { CrystalError } from '../errors.js'
import { TextWave, type AdjointRunner, type EditMask, type KeptPatterns, type PathPlan, type PatternWave } from '../field/backend.js'
import { noiseKey } from '../field/noise.js'
import { packStruct, REDUCE_PARAM_LAYOUT, STEP_PARAM_LAYOUT, stepGroups, TILE, wgslStruct, type StepParams } from '../field/params.js'
import { compiling, type GpuContext, type Kernel, kernelModule, perDevice, pipelineOf } from './context.js'
import { SHADERS } from './shaders.gen.js'
import { ByteLru } from '../util/lru.js'

const STORAGE = 0x80 | 0x4 | 0x8
const UNIFORM = 0x40 | 0x8
const SLOT = 256
/**
 * Steps and readings (a reading is two dispatches) per submit: work goes to the queue as the sweep is
 * built, and nothing waits on it. A question at N = 2048 over 200 memories is some 350 dispatches,
 * which took the H200 machine's host some 15 ms to encode while the device waited for the one submit
 * at 512 (2026-11-27).
 */
const DISPATCHES_PER_SUBMIT = 64
/** The patterns a reading's invocation scores, a lane each of a vec4 (shaders/adjoint.wgsl readout, product). */
const PER_INVOCATION = 4
/** The TILE-row bands a reading's workgroup sums (shaders/adjoint.wgsl band_row): its tile is TILE x READ_BANDS TILE cells. */
const READ_BANDS = 4

/** A kept pattern's key: a host array by identity (recall never changes one once made), a text's by its text. */
type PatternKey = Float32Array | string
const keyOf = (w: PatternWave): PatternKey => (w instanceof TextWave ? w.text : w)

/** Makes the texts' wavefronts (encoding 3) into the buffers, on the device: the backend's encoder. */
export type WaveMaker = (texts: readonly string[], into: readonly GPUBuffer[]) => Promise<void>

/**
 * Patterns kept on the device between sweeps, by key, at most the bytes the latest sweep or write
 * allows. A dropped buffer is destroyed once no sweep or write that may have queued a copy of it is open.
 */
class ResidentPatterns {
  private bound = 0
  private readonly kept = new ByteLru<PatternKey, GPUBuffer>(
    () => this.bound,
    (buffer) => this.retired.push(buffer),
  )
  private retired: GPUBuffer[] = []
  private open = 0

  constructor(private readonly gpu: GpuContext) {}

  /**
   * The device copy of `w`, uploaded the first time; at most `bound` bytes kept, but `inUse` (the
   * sweep's own) are not dropped to make room.
   */
  get(w: Float32Array, inUse: ReadonlySet<PatternKey>, bound: number): GPUBuffer {
    this.bound = bound
    let b = this.kept.get(w)
    if (!b) {
      b = this.gpu.device.createBuffer({ size: w.byteLength, usage: STORAGE })
      this.gpu.transfers.write(b, 0, w)
      this.kept.set(w, b, w.byteLength, (k) => inUse.has(k))
    }
    return b
  }

  /** The text's pattern where kept (now the most recently used). */
  find(text: string): GPUBuffer | undefined {
    return this.kept.get(text)
  }

  has(key: PatternKey): boolean {
    return this.kept.has(key)
  }

  /** A new buffer kept for the text's pattern, for the caller to make it in (before any sweep reads it). `inUse` as `get`'s. */
  make(text: string, inUse: ReadonlySet<PatternKey>, bound: number): GPUBuffer {
    this.bound = bound
    const bytes = 4 * this.gpu.n ** 2
    const b = this.gpu.device.createBuffer({ size: bytes, usage: STORAGE })
    this.kept.set(text, b, bytes, (k) => inUse.has(k))
    return b
  }

  opened(): void {
    this.open++
  }

  closed(): void {
    if (--this.open) return
    for (const b of this.retired) b.destroy()
    this.retired = []
  }

  /** Every pattern dropped and its buffer freed (the backend is going: no sweep of it is left). */
  release(): void {
    this.kept.clear()
    this.open = 1
    this.closed()
  }
}
// per backend, not per device: a device is shared by the engines opened on it (engine/gpu/device.ts keptDevice)
const residents = new WeakMap<GpuContext, ResidentPatterns>()
function residentOf(gpu: GpuContext): ResidentPatterns {
  let resident = residents.get(gpu)
  if (!resident) residents.set(gpu, (resident = new ResidentPatterns(gpu)))
  return resident
}

/**
 * A write's texts made on the device by `make` (the superposition with them), each wavefront kept
 * for recall, within `bound` bytes (the reader's; those written last where not all fit): its first
 * question finds them there, and nothing came back to the host. A text kept already is not copied again.
 */
export async function keepWritten(
  gpu: GpuContext,
  texts: readonly string[],
  bound: number,
  make: (into: readonly (GPUBuffer | undefined)[]) => Promise<void>,
): Promise<void> {
  const resident = residentOf(gpu)
  const room = Math.floor(bound / (4 * gpu.n ** 2))
  const seen = new Set<string>()
  resident.opened()
  try {
    // the last `room` texts are kept; a text kept already, or twice in the write, is copied once at most
    const into = texts.map((t, k) => {
      const fresh = !seen.has(t) && !resident.has(t)
      seen.add(t)
      return fresh && texts.length - k <= room ? resident.make(t, new Set(), bound) : undefined
    })
    await make(into)
  } finally {
    resident.closed()
  }
}

/**
 * Opens a sweep (GpuAdjointRunner), first making on the device the texts' patterns it reads that
 * are not kept there: in one call of the encoder (`make`), those it keeps into kept buffers, the
 * question's (read once) into buffers of the sweep's own. The sweep holds every text pattern's buffer
 * from here: one a write drops meanwhile (engine calls at once) is retired, not freed, while it is open.
 */
export async function openSweep(
  gpu: GpuContext,
  make: WaveMaker,
  field: number,
  params: StepParams,
  patterns: readonly PatternWave[],
  capacity: number,
  path?: PathPlan,
  kept: KeptPatterns = { from: patterns.length, bytes: 0 },
): Promise<GpuAdjointRunner> {
  const compiled = compiling(gpu.device, Object.values(ADJOINT_KERNELS))
  if (compiled !== undefined) await compiled
  const resident = residentOf(gpu)
  // the sweep's own, the question's too (it may read a kept copy), are not dropped to make room
  const inUse = new Set(patterns.map(keyOf))
  const keptKeys = new Set(patterns.slice(kept.from).map(keyOf))
  const texts = new Map<string, GPUBuffer>()
  const made = new Map<string, GPUBuffer>()
  const once: GPUBuffer[] = []
  resident.opened()
  try {
    // the kept first, so that a question that is a kept text's reads that copy
    for (const w of [...patterns.slice(kept.from), ...patterns.slice(0, kept.from)]) {
      if (!(w instanceof TextWave) || texts.has(w.text)) continue
      let b = resident.find(w.text)
      if (!b) {
        const keep = keptKeys.has(w.text)
        b = keep ? resident.make(w.text, inUse, kept.bytes) : gpu.device.createBuffer({ size: 4 * gpu.n ** 2, usage: STORAGE })
        if (!keep) once.push(b)
        made.set(w.text, b)
      }
      texts.set(w.text, b)
    }
    if (made.size) await make([...made.keys()], [...made.values()])
    return new GpuAdjointRunner(gpu, field, params, patterns, capacity, path, kept, texts, once)
  } catch (e) {
    for (const b of once) b.destroy()
    throw e
  } finally {
    resident.closed()
  }
}

// Each backend's last sweep's patterns buffer, for the next sweep that fits in it: at N = 2048 over 200
// memories it is 3.8 GB, and making it anew took some 200 ms a question on the H200.
const spares = new WeakMap<GpuContext, GPUBuffer>()
/** Backends gone (releasePatterns): a sweep of theirs that ends later frees its buffer. */
const released = new WeakSet<GpuContext>()

function patternsBuffer(gpu: GpuContext, bytes: number): GPUBuffer {
  const spare = spares.get(gpu)
  spares.delete(gpu)
  if (spare && spare.size >= bytes) return spare
  // too small: freed before the bigger one is made (the queue still finishes what uses it), which
  // takes an eighth more than asked, as the next question usually reads a memory more
  spare?.destroy()
  return gpu.device.createBuffer({ size: Math.max(16, Math.ceil((bytes * 1.125) / 4) * 4), usage: STORAGE })
}

function keepSpare(gpu: GpuContext, buffer: GPUBuffer): void {
  const spare = spares.get(gpu)
  if (released.has(gpu) || (spare && spare.size >= buffer.size)) buffer.destroy()
  else {
    spare?.destroy()
    spares.set(gpu, buffer)
  }
}

/** Frees the patterns a backend's sweeps kept on the device (its destroy). */
export function releasePatterns(gpu: GpuContext): void {
  residents.get(gpu)?.release()
  residents.delete(gpu)
  spares.get(gpu)?.destroy()
  spares.delete(gpu)
  released.add(gpu)
}

const ENTRIES = ['init', 'step', 'product', 'readout', 'step_k', 'secant', 'scale'] as const
type Entry = (typeof ENTRIES)[number]

/** Recall's sweep's kernels (context.ts Kernel) by entry point, made once a device: the four every sweep uses first, then the rest. */
export const ADJOINT_KERNELS = Object.fromEntries(
  ENTRIES.map((entry): [Entry, Kernel] => [
    entry,
    {
      key: `adjoint:${entry}`,
      describe: (device) => {
        const module = perDevice(device, 'adjoint', () =>
          kernelModule(
            device,
            wgslStruct('Params', STEP_PARAM_LAYOUT),
            SHADERS.adjoint,
            `const PER_INVOCATION: u32 = ${PER_INVOCATION}u;\nconst READ_BANDS: u32 = ${READ_BANDS}u;\n`,
          ),
        )
        return { layout: 'auto', compute: { module, entryPoint: entry } }
      },
    },
  ]),
) as Record<Entry, Kernel>

function pipeline(device: GPUDevice, entry: Entry): GPUComputePipeline {
  return pipelineOf(device, ADJOINT_KERNELS[entry])
}

export class GpuAdjointRunner implements AdjointRunner {
  private readonly a: [GPUBuffer, GPUBuffer]
  private readonly b: GPUBuffer
  private readonly patterns: GPUBuffer
  private readonly partials: GPUBuffer
  private readonly scores: GPUBuffer
  private readonly uniform: GPUBuffer
  private readonly rows: GPUBuffer
  /** The patterns each reading reads, one list after another, and a uniform slot per reading holding where its list starts. */
  private readonly picks: GPUBuffer
  private readonly pickRows: GPUBuffer
  /** Each reading's patterns, each with the index of its score in `scores`. */
  private readonly lists: Map<number, number>[] = []
  private picked = 0
  /** Dispatches of readings so far: a reading takes one per window of the patterns buffer it reads. */
  private windowsRead = 0
  /** The slots a sweep has for those dispatches (rows, pickRows), and for picks. */
  private readonly slots: number
  /** Bytes of the patterns buffer one binding shows (the device's limit), and the offsets' alignment. */
  private readonly window: { bytes: number; align: number }
  /** One binding shows every pattern: a reading is one dispatch, its list in its order. */
  private readonly inOne: boolean
  /** The readings' uniform slots and lists, staged on the host and written before the submit that needs them. */
  private readonly rowBytes: ArrayBuffer
  private readonly pickRowBytes: Uint32Array
  private readonly pickBytes: Uint32Array
  private flushed = { windows: 0, picked: 0 }
  private readonly resident: ResidentPatterns
  private readonly owned: GPUBuffer[] = []
  private readonly groups: number
  /** A reading's workgroups down the field, and its tiles (partial sums) a pattern. */
  private readonly readRows: number
  private readonly readTiles: number
  private readonly count: number
  private cur = 0 // a[cur] holds a
  private readings = 0
  private encoder: GPUCommandEncoder
  private pass: GPUComputePassEncoder
  private dispatches = 0
  private readonly stepGroups: GPUBindGroup[]
  private readonly sumGroup: GPUBindGroup
  /** The path's k, [step][cell] from step `from` (tests read it back), and a uniform slot per step holding its row. */
  readonly path?: { from: number; steps: number; k: GPUBuffer; rows: GPUBuffer }

  constructor(
    private readonly gpu: GpuContext,
    field: number,
    params: StepParams,
    patterns: readonly PatternWave[],
    private readonly capacity: number,
    path?: PathPlan,
    kept: KeptPatterns = { from: patterns.length, bytes: 0 },
    /** Each text pattern's buffer on the device (openSweep made or found them). */
    texts = new Map<string, GPUBuffer>(),
    /** Those of them made for this sweep alone (a question's), freed with it. */
    once: readonly GPUBuffer[] = [],
  ) {
    const { device, n, transfers } = gpu
    const cells = n * n
    this.count = patterns.length
    this.groups = Math.ceil(n / TILE)
    this.readRows = Math.ceil(this.groups / READ_BANDS)
    this.readTiles = this.groups * this.readRows
    // One binding shows at most the device's largest storage binding (2 GiB on the H200, where 200
    // memories at N = 2048 are 3.4 GB of patterns): a reading reads the patterns through as many
    // windows of the buffer as its list needs, each window a dispatch. A window holds one pattern and
    // the alignment's slack at least (checked before anything is made).
    const align = device.limits.minStorageBufferOffsetAlignment
    this.window = { bytes: Math.floor(gpu.bindingBytes / align) * align, align }
    if (this.window.bytes <= cells * 4 + align)
      throw new CrystalError(
        'backend_unavailable',
        `one pattern at N = ${n} (${cells * 4} bytes) is larger than this device's storage binding (${gpu.bindingBytes} bytes)`,
      )
    const buffer = (bytes: number, usage = STORAGE) => {
      const b = device.createBuffer({ size: Math.max(16, bytes), usage })
      this.owned.push(b)
      return b
    }
    this.a = [buffer(cells * 4), buffer(cells * 4)]
    this.b = buffer(cells * 4)
    this.patterns = patternsBuffer(gpu, this.count * cells * 4)
    this.partials = buffer(this.count * this.readTiles * 4)
    // sorted by place, a list's patterns fill each window but the last, less a pattern and the alignment
    this.inOne = this.count * cells * 4 <= this.window.bytes
    const windows = this.inOne ? 1 : Math.ceil((this.count * cells * 4) / (this.window.bytes - cells * 4 - align)) + 1
    this.slots = capacity * windows
    // a product's reading picks one pattern more than it scores, in each window
    this.scores = buffer(this.slots * (this.count + 1) * 4)
    this.uniform = buffer(STEP_PARAM_LAYOUT.length * 4, UNIFORM)
    this.rows = buffer(this.slots * SLOT, UNIFORM)
    this.picks = buffer(this.slots * (this.count + 1) * 4)
    this.pickRows = buffer(this.slots * SLOT, UNIFORM)
    const u = buffer(cells * 4)
    const prev = buffer(cells * 4)

    this.rowBytes = new ArrayBuffer(this.slots * SLOT)
    this.pickRowBytes = new Uint32Array((this.slots * SLOT) / 4)
    this.pickBytes = new Uint32Array(this.slots * (this.count + 1))

    this.writeParams(params)
    this.owned.push(...once)

    const group = (entry: Entry, resources: Record<number, GPUBuffer>) =>
      device.createBindGroup({
        layout: pipeline(device, entry).getBindGroupLayout(0),
        entries: Object.entries(resources).map(([k, buf]) => ({ binding: Number(k), resource: { buffer: buf } })),
      })
    this.stepGroups = [0, 1].map((c) => group('step', { 0: this.uniform, 1: this.a[c], 2: this.b, 3: this.a[1 - c] }))
    this.sumGroup = device.createBindGroup({
      layout: gpu.sumRows.layout,
      entries: [
        { binding: 0, resource: { buffer: this.rows, size: 16 } },
        { binding: 1, resource: { buffer: this.partials } },
        { binding: 2, resource: { buffer: this.scores } },
      ],
    })

    this.encoder = device.createCommandEncoder()
    const resident = residentOf(gpu)
    this.resident = resident
    resident.opened()
    // the patterns read once (a question's) go up from the host, or were made on the device for this
    // sweep; the kept ones, and a question that is a kept text's, are copied from their kept buffers
    const inUse = new Set(patterns.map(keyOf))
    patterns.forEach((w, p) => {
      if (p < kept.from && w instanceof Float32Array) transfers.write(this.patterns, p * cells * 4, w)
      else {
        const from = w instanceof TextWave ? texts.get(w.text) : resident.get(w, inUse, kept.bytes)
        if (!from)
          throw new CrystalError('internal', `the pattern of "${(w as TextWave).text}" was not made on the device before its sweep`)
        this.encoder.copyBufferToBuffer(from, 0, this.patterns, p * cells * 4, cells * 4)
      }
    })
    if (path) this.path = this.followPath(path, buffer)
    const state = gpu.state()
    this.encoder.copyBufferToBuffer(state.u, field * cells * 4, u, 0, cells * 4)
    this.encoder.copyBufferToBuffer(state.prev, field * cells * 4, prev, 0, cells * 4)
    this.pass = this.encoder.beginComputePass()
    this.pass.setPipeline(pipeline(device, 'init'))
    this.pass.setBindGroup(0, group('init', { 0: this.uniform, 2: this.b, 3: this.a[0], 4: u, 5: prev }))
    this.gpu.transfers.dispatch(this.pass, this.groups, this.groups)
  }

  /**
   * Reruns the path (engine/recall/path.ts followPath, on the device): the field step on a scratch
   * copy from each kept state, the secant of every step into its row first. Encoded before the sweep.
   */
  private followPath(
    plan: PathPlan,
    buffer: (bytes: number, usage?: number) => GPUBuffer,
  ): { from: number; steps: number; k: GPUBuffer; rows: GPUBuffer } {
    const { device, n, transfers } = this.gpu
    const cells = n * n
    const stepDispatch = stepGroups(n)
    const tiles = stepDispatch[0] * stepDispatch[1]
    const last = plan.ops.at(-1)
    const steps = last?.kind === 'run' ? last.to - plan.from : 0
    const k = buffer(steps * cells * 4)
    const rows = buffer(steps * SLOT, UNIFORM)
    const uniforms = buffer(steps * SLOT, UNIFORM)
    const s = [buffer(cells * 4), buffer(cells * 4), buffer(cells * 4)]
    const ledger = buffer(4 * tiles * 4) // the step's tile sums (ring slot 0), unread here
    const rowBytes = new ArrayBuffer(steps * SLOT)
    const stepBytes = new ArrayBuffer(steps * SLOT)
    let t = plan.from
    for (const op of plan.ops) {
      if (op.kind === 'run')
        for (; t < op.to; t++) {
          new Uint32Array(rowBytes, (t - plan.from) * SLOT, 1)[0] = t - plan.from
          packStruct(
            STEP_PARAM_LAYOUT,
            { ...op.params, fields: 1, tiles_per_field: tiles, noise_key: noiseKey(plan.seed, t) },
            stepBytes,
            (t - plan.from) * SLOT,
          )
        }
    }
    if (!steps) return { from: plan.from, steps, k, rows }
    transfers.write(rows, 0, rowBytes)
    transfers.write(uniforms, 0, stepBytes)
    const res = (binding: number, buf: GPUBuffer, offset = 0, size?: number) => ({ binding, resource: { buffer: buf, offset, size } })
    const stepBindings = [0, 1, 2].map((r) =>
      device.createBindGroup({
        layout: this.gpu.fieldStep.layout,
        entries: [
          res(0, uniforms, 0, STEP_PARAM_LAYOUT.length * 4),
          res(1, s[r]),
          res(2, s[(r + 1) % 3]),
          res(3, s[(r + 2) % 3]),
          res(4, ledger),
          // one field, drawing its own random numbers (the path's params have fields: 1)
          res(6, this.gpu.fieldStep.draws),
        ],
      }),
    )
    const secant = pipeline(device, 'secant')
    let encoder = device.createCommandEncoder()
    let r = 0 // s[r] is u_prev, s[r + 1] is u
    t = plan.from
    for (const op of plan.ops) {
      if (op.kind === 'reset') {
        const saved = op.saved
        if ('u' in saved) {
          // a write lands before the submit after it: the steps so far go first
          this.gpu.transfers.submit(encoder)
          encoder = device.createCommandEncoder()
          transfers.write(s[(r + 1) % 3], 0, saved.u)
          transfers.write(s[r], 0, saved.prev)
        } else {
          // a kept state holds u then u_prev
          encoder.copyBufferToBuffer(this.gpu.mask(saved), 0, s[(r + 1) % 3], 0, cells * 4)
          encoder.copyBufferToBuffer(this.gpu.mask(saved), cells * 4, s[r], 0, cells * 4)
        }
        continue
      }
      if (t >= op.to) continue
      const pass = encoder.beginComputePass()
      for (; t < op.to; t++) {
        const j = t - plan.from
        pass.setPipeline(secant)
        pass.setBindGroup(
          0,
          device.createBindGroup({
            layout: secant.getBindGroupLayout(0),
            entries: [
              res(0, uniforms, j * SLOT, STEP_PARAM_LAYOUT.length * 4),
              res(4, s[(r + 1) % 3]),
              res(8, k),
              res(9, rows, j * SLOT, 16),
            ],
          }),
        )
        this.gpu.transfers.dispatch(pass, this.groups, this.groups)
        pass.setPipeline(this.gpu.fieldStep.pipeline)
        pass.setBindGroup(0, stepBindings[r], [j * SLOT])
        this.gpu.transfers.dispatch(pass, ...stepDispatch, 1)
        r = (r + 1) % 3
      }
      pass.end()
    }
    this.gpu.transfers.submit(encoder)
    return { from: plan.from, steps, k, rows }
  }

  /** Counts a dispatch, and hands the queued work to the GPU every DISPATCHES_PER_SUBMIT. */
  private dispatched(): void {
    if (++this.dispatches % DISPATCHES_PER_SUBMIT) return
    this.pass.end()
    this.flush()
    this.gpu.transfers.submit(this.encoder)
    this.encoder = this.gpu.device.createCommandEncoder()
    this.pass = this.encoder.beginComputePass()
  }

  step(t?: number): void {
    const j = t === undefined || !this.path ? -1 : t - this.path.from
    if (this.path && j >= 0 && j < this.path.steps) {
      const p = pipeline(this.gpu.device, 'step_k')
      this.pass.setPipeline(p)
      const entries: [number, GPUBuffer, number, number | undefined][] = [
        [0, this.uniform, 0, undefined],
        [1, this.a[this.cur], 0, undefined],
        [2, this.b, 0, undefined],
        [3, this.a[1 - this.cur], 0, undefined],
        [8, this.path.k, 0, undefined],
        [9, this.path.rows, j * SLOT, 16],
      ]
      this.pass.setBindGroup(
        0,
        this.gpu.device.createBindGroup({
          layout: p.getBindGroupLayout(0),
          entries: entries.map(([binding, buffer, offset, size]) => ({ binding, resource: { buffer, offset, size } })),
        }),
      )
    } else {
      this.pass.setPipeline(pipeline(this.gpu.device, 'step'))
      this.pass.setBindGroup(0, this.stepGroups[this.cur])
    }
    this.gpu.transfers.dispatch(this.pass, this.groups, this.groups)
    this.cur = 1 - this.cur
    this.dispatched()
  }

  /** New constants from here on: the work queued so far is submitted first, so it keeps the old ones. */
  setParams(p: StepParams): void {
    this.pass.end()
    this.flush()
    this.gpu.transfers.submit(this.encoder)
    this.writeParams(p)
    this.encoder = this.gpu.device.createCommandEncoder()
    this.pass = this.encoder.beginComputePass()
  }

  private writeParams(p: StepParams): void {
    const bytes = new ArrayBuffer(STEP_PARAM_LAYOUT.length * 4)
    packStruct(STEP_PARAM_LAYOUT, { ...p, fields: this.count, tiles_per_field: this.readTiles }, bytes)
    this.gpu.transfers.write(this.uniform, 0, bytes)
  }

  scale(mask: EditMask): void {
    const { device, transfers } = this.gpu
    let buffer: GPUBuffer
    if (mask instanceof Float32Array) {
      buffer = device.createBuffer({ size: mask.byteLength, usage: STORAGE })
      this.owned.push(buffer)
      transfers.write(buffer, 0, mask)
    } else buffer = this.gpu.mask(mask)
    const p = pipeline(device, 'scale')
    this.pass.setPipeline(p)
    this.pass.setBindGroup(
      0,
      device.createBindGroup({
        layout: p.getBindGroupLayout(0),
        entries: [
          [0, this.uniform],
          [2, this.b],
          [3, this.a[this.cur]],
          [7, buffer],
        ].map(([k, buf]) => ({ binding: k as number, resource: { buffer: buf as GPUBuffer } })),
      }),
    )
    this.gpu.transfers.dispatch(this.pass, this.groups, this.groups)
    this.dispatched()
  }

  read(patterns?: readonly number[]): number {
    const list = patterns ?? [...Array(this.count).keys()]
    this.check(list)
    return this.reading('readout', undefined, list)
  }

  product(of: number, patterns: readonly number[]): number {
    this.check([of])
    this.check(patterns)
    return this.reading('product', of, patterns)
  }

  private check(list: readonly number[]): void {
    if (list.length > this.count || list.some((p) => !(p >= 0 && p < this.count)))
      throw new RangeError(`a reading lists patterns 0..${this.count - 1}, each once at most`)
  }

  /**
   * Queues reading k: `entry` per tile and pattern of `list` (for `product`, each with the pattern
   * `q`), then its tiles summed into one score a pattern. The list is read through windows of the
   * patterns buffer, a dispatch each: in its order where one window holds every pattern, else sorted
   * by place. Slots and lists are written by `flush`.
   */
  private reading(entry: 'readout' | 'product', q: number | undefined, list: readonly number[]): number {
    const k = this.readings++
    if (k >= this.capacity) throw new RangeError(`the sweep was opened for ${this.capacity} readings`)
    const scoredAt = new Map<number, number>()
    this.lists.push(scoredAt)
    const patternBytes = this.gpu.n * this.gpu.n * 4
    const { bytes, align } = this.window
    const order = this.inOne ? list : [...list].sort((a, b) => a - b)
    for (let from = 0; from < order.length; ) {
      // the window starts at the first pattern's place, aligned down, and takes the next while they fit
      const offset = Math.floor((order[from] * patternBytes) / align) * align
      let to = from + 1
      while (to < order.length && (this.inOne || (order[to] + 1) * patternBytes - offset <= bytes)) to++
      this.readWindow(entry, q, order.slice(from, to), this.inOne ? 0 : offset, scoredAt)
      from = to
    }
    return k
  }

  /** One dispatch of a reading: `scored`, read through the window of the patterns buffer at `offset`. */
  private readWindow(
    entry: 'readout' | 'product',
    q: number | undefined,
    scored: readonly number[],
    offset: number,
    scoredAt: Map<number, number>,
  ): void {
    const { device, n } = this.gpu
    const cells = n * n
    const d = this.windowsRead++
    const first = this.picked
    // picks are places in floats within the bound windows: q's in its own (binding 5), the rest in this one
    const { align } = this.window
    const qOffset = q === undefined ? 0 : Math.floor((q * cells * 4) / align) * align
    const picks = [...(q === undefined ? [] : [q * cells - qOffset / 4]), ...scored.map((p) => p * cells - offset / 4)]
    this.picked += picks.length
    const at = this.picked - scored.length
    scored.forEach((p, i) => scoredAt.set(p, at + i))
    packStruct(REDUCE_PARAM_LAYOUT, { len: this.readTiles, dst_offset: at }, this.rowBytes, d * SLOT)
    this.pickRowBytes.set([first, scored.length], (d * SLOT) / 4)
    this.pickBytes.set(picks, first)
    const p = pipeline(device, entry)
    type Binding = [number, GPUBuffer, number, number | undefined]
    // the covector is read by `readout` only, q by `product` only (an auto layout has only the bindings its entry uses)
    const covector: Binding[] = [
      [1, this.a[this.cur], 0, undefined],
      [2, this.b, 0, undefined],
    ]
    const ofQ: Binding[] = q === undefined ? [] : [[5, this.patterns, qOffset, q * cells * 4 - qOffset + cells * 4]]
    const entries: Binding[] = [
      [0, this.uniform, 0, undefined],
      ...(entry === 'readout' ? covector : ofQ),
      [4, this.patterns, offset, Math.min(this.window.bytes, this.patterns.size - offset)],
      [6, this.partials, 0, undefined],
      [9, this.pickRows, d * SLOT, 16],
      [10, this.picks, 0, undefined],
    ]
    this.pass.setPipeline(p)
    this.pass.setBindGroup(
      0,
      device.createBindGroup({
        layout: p.getBindGroupLayout(0),
        entries: entries.map(([binding, buffer, offset, size]) => ({ binding, resource: { buffer, offset, size } })),
      }),
    )
    this.gpu.transfers.dispatch(this.pass, this.groups, this.readRows, Math.ceil(scored.length / PER_INVOCATION))
    this.pass.setPipeline(this.gpu.sumRows.pipeline)
    this.pass.setBindGroup(0, this.sumGroup, [d * SLOT])
    this.gpu.transfers.dispatch(this.pass, scored.length)
    this.dispatched()
  }

  /** Writes the readings' slots and lists queued since the last submit, one write each, before the submit that reads them. */
  private flush(): void {
    const { transfers } = this.gpu
    const { windows, picked } = this.flushed
    if (this.windowsRead > windows) {
      const [from, to] = [windows * SLOT, this.windowsRead * SLOT]
      transfers.write(this.rows, from, this.rowBytes, from, to - from)
      transfers.write(this.pickRows, from, this.pickRowBytes, from, to - from)
    }
    if (this.picked > picked) transfers.write(this.picks, picked * 4, this.pickBytes, picked * 4, (this.picked - picked) * 4)
    this.flushed = { windows: this.windowsRead, picked: this.picked }
  }

  async results(): Promise<Float64Array> {
    this.pass.end()
    this.flush()
    const rows = new Float64Array(this.readings * this.count)
    if (!this.picked) {
      this.gpu.transfers.submit(this.encoder)
      return rows
    }
    const back = new Float32Array(await this.gpu.transfers.read(this.scores, 0, this.picked * 4, this.encoder, () => this.gpu.failure()))
    this.gpu.check()
    // [reading][pattern], the patterns a reading did not list left at 0
    this.lists.forEach((scoredAt, k) => {
      for (const [p, at] of scoredAt) rows[k * this.count + p] = back[at]
    })
    return rows
  }

  destroy(): void {
    for (const b of this.owned) b.destroy()
    keepSpare(this.gpu, this.patterns)
    this.resident.closed()
  }
}
