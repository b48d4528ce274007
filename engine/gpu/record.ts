// A recorded window kept on the GPU and reduced there: each captured frame of u is added into the
// window's planes by shaders/spectra.wgsl (sum u, sum |u|, the windowed DFT sums; no frame is kept
// or read back). What comes back is what detection reads: the stability plane (sum |u|) of every
// cell with the stability sums (the dream's, shaders/dream.wgsl accumulate), in one read, with each
// map's components and what detection reads of its first parts over the window (shaders/components.wgsl);
// then, in one more, the power sums over the other lists of cells detection reads and the cells it reads
// at a mode's bin (shaders/gather.wgsl, power_sums.wgsl, mode_planes.wgsl). CPU twin:
// engine/cpu/record.ts; tests: engine/detect/spectra.test.ts, engine/discovery/record.test.ts.
import type { FieldTop } from '../detect/sums.js'
import { NOTHING_HELD, type PerturbationQuery, type PerturbationSums, type WindowRecorder, type WindowRecording } from '../field/backend.js'
import { BASIN_SUMS } from '../detect/basin.js'
import { REGROWTH_SUMS } from '../detect/regrowth.js'
import type { WindowReads } from '../detect/detect.js'
import { giveBack, HeldPlanes, reusedFloats, windowCoefficients, windowPlanes, windowTotals } from '../detect/spectra.js'
import { CrystalError } from '../errors.js'
import { packStruct, wgslStruct } from '../field/params.js'
import { compiling, type GpuContext, type Kernel, kernelModule, perDevice, pipelineOf } from './context.js'
import {
  firstSumsBytes,
  firstSumsOf,
  GpuLabeller,
  type LabelledGroup,
  LIST_AND_PEAK_WORDS,
  listOf,
  TOP_WORDS,
  topOf,
} from './components.js'
import { ERASE_KERNELS, eraseUniform, planWords } from './erase.js'
import { SHADERS } from './shaders.gen.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
const COMPUTE_STAGE = 0x4
const WG = 256
/** The uniform's slots, one per frame and chunk of planes, at the 256-byte offsets a dynamic offset needs. */
const SLOT = 256
/** shaders/gather.wgsl's uniform: cells listed, floats a plane, the chunk's first plane and planes held, planes a cell, the first listed cell. */
const GATHER_LAYOUT = [
  ['count', 'u32'],
  ['size', 'u32'],
  ['first', 'u32'],
  ['held', 'u32'],
  ['planes', 'u32'],
  ['base', 'u32'],
] as const
/** shaders/power_sums.wgsl's uniform: lists of the group, its first list, planes a cell, bins, 1 / frames. */
const POWER_SUMS_LAYOUT = [
  ['count', 'u32'],
  ['base', 'u32'],
  ['planes', 'u32'],
  ['bins', 'u32'],
  ['inverse_frames', 'f32'],
] as const
/** shaders/mode_planes.wgsl's uniform: cells read, floats a plane, the chunk's first plane and planes held, bins, where the cells' floats begin. */
const MODE_PLANES_LAYOUT = [
  ['count', 'u32'],
  ['size', 'u32'],
  ['first', 'u32'],
  ['held', 'u32'],
  ['bins', 'u32'],
  ['planes_at', 'u32'],
] as const
/** shaders/basin.wgsl's uniform: cells a field, 1 / cells. */
const BASIN_LAYOUT = [
  ['cells', 'u32'],
  ['inverse_cells', 'f32'],
] as const
/** shaders/<name>.wgsl's kernel of that name, with its uniform struct (`layout`). */
const listKernel = (
  name: 'gather' | 'power_sums' | 'mode_planes' | 'basin',
  struct: string,
  layout: Parameters<typeof wgslStruct>[1],
): Kernel => ({
  key: `${name}:${name}`,
  describe: (device) => ({
    layout: 'auto',
    // the basin halves its lanes as the regrowth does (shaders/lanes.wgsl)
    compute: {
      module: kernelModule(device, wgslStruct(struct, layout), SHADERS[name], name === 'basin' ? SHADERS.lanes : ''),
      entryPoint: name,
    },
  }),
})

/** The recorder's kernels (context.ts Kernel), made once a device: the frames', the gather's, the basin's. */
export const RECORD_KERNELS = {
  accumulate: {
    key: 'spectra:accumulate',
    describe: (device: GPUDevice): GPUComputePipelineDescriptor => ({
      layout: device.createPipelineLayout({ bindGroupLayouts: [accumulateLayout(device)] }),
      compute: { module: kernelModule(device, '', SHADERS.spectra), entryPoint: 'accumulate' },
    }),
  },
  gather: listKernel('gather', 'Gather', GATHER_LAYOUT),
  power_sums: listKernel('power_sums', 'PowerSums', POWER_SUMS_LAYOUT),
  mode_planes: listKernel('mode_planes', 'ModePlanes', MODE_PLANES_LAYOUT),
  basin: listKernel('basin', 'Basin', BASIN_LAYOUT),
} satisfies Record<string, Kernel>

/**
 * shaders/spectra.wgsl's `accumulate`: its uniform a frame's slot (a dynamic offset: every frame's
 * slots are written at the window's start, so a frame's capture can go in one submit with the next's).
 */
function accumulateLayout(device: GPUDevice): GPUBindGroupLayout {
  return perDevice(device, 'spectra/accumulate', () =>
    device.createBindGroupLayout({
      entries: (['uniform', 'read-only-storage', 'read-only-storage', 'storage'] as const).map((type, binding) => ({
        binding,
        visibility: COMPUTE_STAGE,
        buffer: binding ? { type } : { type, hasDynamicOffset: true },
      })),
    }),
  )
}

/** Planes of the tail read back first: the stability plane (sum |u|), the stability sums. */
const TAIL = 2

export class GpuRecorder implements WindowRecorder {
  /** Buffers of whole planes. */
  private chunks: GPUBuffer[] = []
  /** The planes read back first (TAIL), copied here from the chunks and the sums. */
  private tail: GPUBuffer | undefined
  private perChunk = 1
  private frames = 0
  /** The window's factors and the uniform's slots, made with its chunks; the kernel, made once; the
   * bind groups of a capture, a chunk's each, by the state buffer it reads (one of the step's three). */
  private window:
    | { coef: GPUBuffer; uniform: GPUBuffer; pipeline: GPUComputePipeline; groups: WeakMap<GPUBuffer, GPUBindGroup[]> }
    | undefined
  /** The stability sums as holdSums found them. */
  private held: GPUBuffer | undefined
  /** Labels the stability maps where they lie, for the first read (engine/gpu/components.ts). */
  private labeller: GpuLabeller | undefined

  constructor(
    private readonly gpu: GpuContext,
    /** The stability sums, as the later window, and the samples they hold. */
    private readonly stability: () => { sums: GPUBuffer; taken: number },
    /** The largest buffer to make: the device's limits unless given (a test gives less, to make chunks). */
    private readonly maxBytes?: number,
  ) {}

  private get planeBytes(): number {
    return this.gpu.n * this.gpu.n * this.gpu.fields * 4
  }

  private get planes(): number {
    return windowPlanes(this.frames)
  }

  /** The largest buffer to make: the device's limits unless given. */
  private get limit(): number {
    const { limits } = this.gpu.device
    return this.maxBytes ?? Math.min(limits.maxBufferSize, limits.maxStorageBufferBindingSize)
  }

  /** Planes of the tail a read brings back: all of them unless they exceed the largest buffer. */
  private get perTail(): number {
    return Math.max(1, Math.floor(this.limit / this.planeBytes))
  }

  /**
   * The labeller, where the stability maps are labelled on the device and their components' lists come
   * back with them: where the map is the plane times 1 / frames exactly (frames a power of two: a
   * window has 32), the planes come back in one read and the labels and tallies (4 planes' worth) fit
   * the device's buffers.
   */
  private labels(): GpuLabeller | undefined {
    const { frames } = this
    const { n, fields, bindingBytes, device } = this.gpu
    const layout = GpuLabeller.layout(n, fields, bindingBytes, true, true)
    // the first parts' reads are bound whole, and come back in the tail with the planes and the lists
    const tail = TAIL * this.planeBytes + this.labelledBytes(frames)
    const { maxBufferSize } = device.limits
    const fits =
      layout !== undefined && layout.bytes <= maxBufferSize && firstSumsBytes(fields, frames) <= bindingBytes && tail <= maxBufferSize
    if (!(frames > 0 && (frames & (frames - 1)) === 0 && this.perTail >= TAIL && fits)) return undefined
    return (this.labeller ??= new GpuLabeller(this.gpu))
  }

  /** What comes back after the planes where the maps are labelled here: each field's list and first parts, then those parts' reads (firstSumsOf). */
  private labelledBytes(frames: number): number {
    const { fields } = this.gpu
    return fields * (LIST_AND_PEAK_WORDS + TOP_WORDS) * 4 + firstSumsBytes(fields, frames)
  }

  /** Chunks for a window `frames` long (its planes), each within the device's limits, and the tail. */
  private allocate(frames: number): void {
    this.release()
    const { device } = this.gpu
    const bytes = this.planeBytes
    this.frames = frames
    this.perChunk = Math.max(1, Math.floor(this.limit / bytes))
    const count = Math.max(1, Math.ceil(this.planes / this.perChunk))
    // kept between engines (Transfers.buffer): evolve opens two a generation, each with these 1.3 GB at population 1,000
    const { transfers } = this.gpu
    this.chunks = Array.from({ length: count }, (_, c) =>
      transfers.buffer(Math.min(this.perChunk, this.planes - c * this.perChunk) * bytes, STORAGE),
    )
    // the lists of components, the first parts' sums, and what detection reads of those parts come back after the planes (`labels`)
    const lists = this.labels() ? this.labelledBytes(frames) : 0
    this.tail = transfers.buffer(Math.min(TAIL, this.perTail) * bytes + lists, STORAGE)
    const factors = windowCoefficients(Math.max(1, frames))
    const coef = transfers.buffer(factors.byteLength, STORAGE)
    transfers.write(coef, 0, factors.buffer as ArrayBuffer)
    // a slot a frame and chunk ([frame][chunk]), written once a window (capture's slot 0)
    const uniform = transfers.buffer(Math.max(1, frames) * count * SLOT, UNIFORM)
    const pipeline = pipelineOf(device, RECORD_KERNELS.accumulate)
    this.window = { coef, uniform, pipeline, groups: new WeakMap() }
  }

  capture(slot: number, frames: number): Promise<void> {
    const wait = slot === 0 ? compiling(this.gpu.device, [RECORD_KERNELS.accumulate]) : undefined
    if (wait !== undefined) return wait.then(() => this.capture(slot, frames))
    if (slot === 0 && frames !== this.frames) this.allocate(frames)
    if (!this.window) throw new CrystalError('bad_argument', `captureFrame: slot ${slot} of a window that slot 0 did not start`)
    // a frame's uniform slot is written at the window's start
    if (slot >= this.frames) throw new CrystalError('bad_argument', `captureFrame: slot ${slot} of a window of ${this.frames} frames`)
    const { coef, uniform: slots, pipeline, groups: made } = this.window
    const { device, n, fields, transfers } = this.gpu
    const size = n * n * fields
    const count = this.chunks.length
    if (slot === 0) {
      const uniform = new ArrayBuffer(frames * count * SLOT)
      for (let t = 0; t < frames; t++)
        for (let c = 0; c < count; c++)
          new Uint32Array(uniform, (t * count + c) * SLOT, 5).set([
            size,
            t,
            c * this.perChunk,
            Math.min(this.perChunk, this.planes - c * this.perChunk),
            this.planes,
          ])
      transfers.write(slots, 0, uniform)
    }
    const { u } = this.gpu.state()
    let bound = made.get(u)
    if (!bound) {
      bound = this.chunks.map((chunk, c) => {
        const entries = [
          { binding: 0, resource: { buffer: slots, size: 32 } },
          { binding: 1, resource: { buffer: u } },
          { binding: 2, resource: { buffer: coef } },
          { binding: 3, resource: { buffer: chunk, size: Math.min(this.perChunk, this.planes - c * this.perChunk) * this.planeBytes } },
        ]
        return device.createBindGroup({ layout: accumulateLayout(device), entries })
      })
      made.set(u, bound)
    }
    const encoder = device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    pass.setPipeline(pipeline)
    const groups = Math.ceil(size / WG)
    for (const [c, group] of bound.entries()) {
      pass.setBindGroup(0, group, [(slot * count + c) * SLOT])
      transfers.dispatch(pass, Math.min(groups, 65535), Math.ceil(groups / 65535))
    }
    pass.end()
    // a frame is taken between steps: it goes with the steps after it (in a submit with others)
    transfers.submitWithNext(encoder, [slots, u, coef, ...this.chunks])
    return Promise.resolve()
  }

  /**
   * The stability plane and the stability sums, in one read (one a plane where two planes exceed the
   * largest buffer), with each map's components and what detection reads of its first parts (their
   * lists' power sums and their cells at their mode: TopPart.reads) where the maps are labelled here;
   * the other planes stay on the GPU, and `gather` brings back what else detection reads of them
   * (engine/detect/served.ts: what came back is not named). What comes back is on shared
   * memory (reusedFloats): worker threads detect on it without a copy, and `release` gives it back.
   */
  async collect(): Promise<WindowRecording> {
    const labelling = this.labels()
    const compiled = compiling(this.gpu.device, [
      ...(this.chunks.length ? [] : [RECORD_KERNELS.accumulate]),
      ...(labelling ? GpuLabeller.kernels : []),
    ])
    if (compiled !== undefined) await compiled
    if (!this.chunks.length) this.allocate(0)
    const bytes = this.planeBytes
    const floats = bytes / 4
    const tail = this.tail!
    // the planes in the order they come back: plane 1 (sum |u|) from the chunk that holds it, the sums
    const stabilityAt: [GPUBuffer, number] = [this.chunks[Math.floor(1 / this.perChunk)], (1 % this.perChunk) * bytes]
    const later = this.stability()
    const planes: [GPUBuffer, number][] = [stabilityAt, [later.sums, 0]]
    const { fields, n } = this.gpu
    const cells = n * n
    // then, where the maps are labelled on the device, each field's list of components after them, and
    // its first parts' sums over both windows (topOf); then what detection reads of those parts over the
    // window, made where its planes lie (firstSumsOf)
    const readBytes = labelling ? firstSumsBytes(fields, this.frames) : 0
    const listWords = labelling ? this.labelledBytes(this.frames) / 4 : 0
    const back = reusedFloats(planes.length * floats + listWords)
    const used = [back]
    let groups: LabelledGroup[] = []
    for (let first = 0; first < planes.length; first += this.perTail) {
      const group = planes.slice(first, first + this.perTail)
      const encoder = this.gpu.device.createCommandEncoder()
      group.forEach(([source, offset], k) => encoder.copyBufferToBuffer(source, offset, tail, k * bytes, bytes))
      let into = back.subarray(first * floats, (first + group.length) * floats)
      if (labelling) {
        // the maps as stability() makes them: the sums times 1 / frames, exact for a power of two
        const maps = { buffer: stabilityAt[0], base: stabilityAt[1] / 4, stride: cells, scale: 1 / this.frames }
        const window = { chunks: this.chunks, perChunk: this.perChunk, planes: this.planes, frames: this.frames }
        groups = labelling.encode(encoder, maps, n, fields, {
          shapes: true,
          later: { buffer: later.sums, base: 0, stride: cells, taken: later.taken },
          places: true,
          window,
        })
        let at = planes.length * bytes
        for (const g of groups) {
          const length = g.fields * LIST_AND_PEAK_WORDS * 4
          encoder.copyBufferToBuffer(labelling.out!, g.offset, tail, at, length)
          encoder.copyBufferToBuffer(labelling.out!, g.top!, tail, at + length, g.fields * TOP_WORDS * 4)
          at += length + g.fields * TOP_WORDS * 4
        }
        encoder.copyBufferToBuffer(labelling.sums!, 0, tail, at, readBytes)
        into = back
      }
      await this.gpu.transfers.readInto(tail, 0, encoder, () => this.gpu.failure(), into)
    }
    this.gpu.check()
    const lists = new Array<Float64Array | undefined>(fields)
    const tops = new Array<FieldTop | undefined>(fields)
    let at = back.byteOffset + planes.length * bytes
    const reads = back.subarray(back.length - readBytes / 4)
    for (const g of groups) {
      const words = new Uint32Array(back.buffer, at, g.fields * LIST_AND_PEAK_WORDS)
      const top = new Uint32Array(back.buffer, at + words.byteLength, g.fields * TOP_WORDS)
      for (let f = 0; f < g.fields; f++) {
        lists[g.first + f] = listOf(words, g.fields, f)
        const first = topOf(words, top, g.fields, f, true)
        if (first) {
          const made = firstSumsOf(reads, fields, g.first + f, first.parts.length, this.frames)
          first.parts.forEach((part, k) => (part.reads = made[k]))
        }
        tops[g.first + f] = first
      }
      at += words.byteLength + top.byteLength
    }
    const held = Array.from({ length: fields }, (_, f) => new HeldPlanes(f, back.subarray(f * cells, (f + 1) * cells), lists[f], tops[f]))
    return {
      frames: this.frames,
      window: (f) => held[f],
      sums: back.subarray(floats, 2 * floats),
      gather: async (reads) => {
        const take = await this.gather(reads, held)
        let taken: Promise<void> | undefined
        return () =>
          (taken ??= (async () => {
            if (take) used.push(await take())
          })())
      },
      release: () => {
        for (const floats of used.splice(0)) giveBack(floats)
      },
    }
  }

  /**
   * Per field, the power sums of the lists of cells listed (each list's cells' planes gathered into a
   * scratch buffer by shaders/gather.wgsl, then shaders/power_sums.wgsl) and the cells listed at their
   * mode's bin (shaders/mode_planes.wgsl), submitted now and riding on the device's next read
   * (Transfers.ride); returns how to take them into the fields' windows, which gives the floats they
   * are held in (nothing where nothing is listed).
   */
  private async gather(reads: readonly WindowReads[], held: HeldPlanes[]): Promise<(() => Promise<Float32Array>) | undefined> {
    const { device, transfers } = this.gpu
    const { gather, power_sums, mode_planes } = RECORD_KERNELS
    const compiled = compiling(device, [gather, power_sums, mode_planes])
    if (compiled !== undefined) await compiled
    const cells = this.gpu.n * this.gpu.n
    const planes = this.planes
    const bins = (planes - 2) / 2
    const sums = listPlan(reads, cells, planes, this.limit)
    // per cell read at a mode, [field][cell] and its mode's list among all fields' lists
    const modes = new Uint32Array(reads.reduce((a, r) => a + r.modes.length, 0))
    for (let f = 0, j = 0, lists = 0; f < reads.length; lists += reads[f++].ends.length) {
      const m = reads[f].modes
      // plain stores: the pair assigned as arrays cost some 26 ms a generation at population 1,000 (the H200's profile)
      for (let k = 0; k < m.length; k += 2, j += 2) {
        modes[j] = f * cells + m[k]
        modes[j + 1] = lists + m[k + 1]
      }
    }
    if (!sums.lists && !modes.length) return undefined
    // the sums first, then 4 floats a cell read at its mode
    const sumFloats = sums.lists * bins
    const floats = sumFloats + 2 * modes.length
    const chunks = this.chunks.length
    // uniform slots: per group of lists its gather from each chunk and its sums; then the modes' from each chunk
    const groupSlot = (g: number) => g * (chunks + 1)
    const modeSlot = groupSlot(sums.groups.length)
    const slots = new ArrayBuffer((modeSlot + chunks) * SLOT)
    const size = cells * this.gpu.fields
    const planesIn = (c: number) => Math.min(this.perChunk, planes - c * this.perChunk)
    for (const [g, group] of sums.groups.entries()) {
      for (let c = 0; c < chunks; c++) {
        const values = { count: group.rows, size, first: c * this.perChunk, held: planesIn(c), planes, base: group.firstRow }
        packStruct(GATHER_LAYOUT, values, slots, (groupSlot(g) + c) * SLOT)
      }
      const values = { count: group.lists, base: group.firstList, planes, bins, inverse_frames: 1 / this.frames }
      packStruct(POWER_SUMS_LAYOUT, values, slots, (groupSlot(g) + chunks) * SLOT)
    }
    for (let c = 0; c < chunks; c++) {
      const values = { count: modes.length / 2, size, first: c * this.perChunk, held: planesIn(c), bins, planes_at: sumFloats }
      packStruct(MODE_PLANES_LAYOUT, values, slots, (modeSlot + c) * SLOT)
    }
    const { buffer, written, made } = this.scratch()
    let back: () => Promise<ArrayBuffer>
    try {
      const [index, bounds, totals, cellsRead] = [sums.cells, sums.bounds, windowTotals(this.frames).float32, modes].map((d) => written(d))
      const uniform = written(new Uint8Array(slots), UNIFORM)
      const scratch = buffer(sums.mostRows * planes * 4)
      const out = buffer(floats * 4)
      const [gatherKernel, sumsKernel, modesKernel] = [
        pipelineOf(device, RECORD_KERNELS.gather),
        pipelineOf(device, RECORD_KERNELS.power_sums),
        pipelineOf(device, RECORD_KERNELS.mode_planes),
      ]
      const encoder = device.createCommandEncoder()
      const pass = encoder.beginComputePass()
      const run = (
        kernel: GPUComputePipeline,
        slot: number,
        layout: readonly unknown[],
        resources: GPUBindingResource[],
        invocations: number,
      ) => {
        this.bind(pass, kernel, { buffer: uniform, offset: slot * SLOT, size: layout.length * 4 }, resources)
        this.dispatch(pass, invocations)
      }
      // per group of lists, its cells' planes into the scratch buffer from each chunk, then its sums
      for (const [g, group] of sums.groups.entries()) {
        if (group.rows)
          for (const [c, chunk] of this.chunks.entries())
            run(
              gatherKernel,
              groupSlot(g) + c,
              GATHER_LAYOUT,
              [{ buffer: index }, { buffer: chunk }, { buffer: scratch, size: group.rows * planes * 4 }],
              group.rows,
            )
        run(
          sumsKernel,
          groupSlot(g) + chunks,
          POWER_SUMS_LAYOUT,
          [{ buffer: bounds }, { buffer: scratch }, { buffer: totals }, { buffer: out }],
          group.lists * bins,
        )
      }
      // then each cell at its mode's strongest bin, from the sums just made
      if (modes.length)
        for (const [c, chunk] of this.chunks.entries())
          run(modesKernel, modeSlot + c, MODE_PLANES_LAYOUT, [{ buffer: cellsRead }, { buffer: chunk }, { buffer: out }], modes.length / 2)
      pass.end()
      transfers.submit(encoder)
      back = transfers.ride(out, 0, floats * 4, () => this.gpu.failure())
    } finally {
      // after the copy aside that rides (submitted first where it waits)
      for (const b of made) transfers.destroy(b)
    }
    return async () => {
      const gathered = reusedFloats(floats)
      gathered.set(new Float32Array(await back(), 0, floats))
      this.gpu.check()
      this.holdGathered(reads, held, gathered, bins, sumFloats)
      return gathered
    }
  }

  /** What `gather` brought back, into the fields' windows: per field its lists' power sums, then its cells at their modes. */
  private holdGathered(reads: readonly WindowReads[], held: HeldPlanes[], gathered: Float32Array, bins: number, sumFloats: number): void {
    for (let f = 0, lists = 0, read = 0; f < reads.length; f++) {
      const r = reads[f]
      held[f].hold({
        gathered,
        bins,
        lists: r.lists,
        ends: r.ends,
        powersFrom: lists * bins,
        modes: r.modes,
        modesFrom: sumFloats + 2 * read,
      })
      lists += r.ends.length
      read += r.modes.length
    }
  }

  /**
   * Keeps a copy of the stability sums as they are now on the device (the window before a
   * perturbation), or of `sums`: perturbationSums compares the sums then with these.
   */
  holdSums(sums?: Float32Array): Promise<void> {
    const bytes = this.planeBytes
    this.held ??= this.gpu.transfers.buffer(bytes, STORAGE)
    if (sums) this.gpu.transfers.write(this.held, 0, sums)
    else {
      const encoder = this.gpu.device.createCommandEncoder()
      encoder.copyBufferToBuffer(this.stability().sums, 0, this.held, 0, bytes)
      // with the work after it (the perturbation's steps and samples, which add to the sums anew)
      this.gpu.transfers.submitWithNext(encoder, [this.stability().sums, this.held])
    }
    return Promise.resolve()
  }

  /** The held sums of `fields` into `target`'s (a recorder on this device), field by field on the queue: nothing read back. */
  copyHeld(fields: readonly number[], target: WindowRecorder): Promise<void> {
    if (!this.held) return Promise.resolve()
    if (!(target instanceof GpuRecorder) || target.gpu.device !== this.gpu.device || target.gpu.fields !== fields.length)
      throw new CrystalError('bad_argument', `held stability sums go to a recorder of ${fields.length} field(s) on this device`)
    const bytes = this.gpu.n * this.gpu.n * 4
    target.held ??= target.gpu.transfers.buffer(target.planeBytes, STORAGE)
    const encoder = this.gpu.device.createCommandEncoder()
    fields.forEach((f, k) => encoder.copyBufferToBuffer(this.held!, f * bytes, target.held!, k * bytes, bytes))
    // the target's work handed over first (the copy of its state), then this one's, then the copy
    target.gpu.transfers.flush()
    this.gpu.transfers.submit(encoder)
    return Promise.resolve()
  }

  /**
   * The perturbation's answers made on the device, in one submit and one read: each kicked field's
   * basin sums from the sums held and those now (shaders/basin.wgsl, a workgroup a field), and each
   * erased field's regrowth sums over its plan's disc (shaders/erase.wgsl `regrowth`, a workgroup a
   * field, the disc decided there from the plan's sums); the stability sums themselves stay there.
   * CPU twin: engine/cpu/record.ts HostRecorder.perturbationSums.
   */
  async perturbationSums(query: PerturbationQuery): Promise<PerturbationSums> {
    return (await this.answers(query, false))()
  }

  async perturbationSumsLater(query: PerturbationQuery): Promise<() => Promise<PerturbationSums>> {
    return this.answers(query, true)
  }

  /**
   * The perturbation's sums made (one submit), then read back at once, or, with `ride`, copied aside to
   * come back with the device's next read (Transfers.ride); how to take them.
   */
  private async answers({ pattern, basins, erased }: PerturbationQuery, ride: boolean): Promise<() => Promise<PerturbationSums>> {
    const { device, transfers, n } = this.gpu
    const compiled = compiling(device, [RECORD_KERNELS.basin, ERASE_KERNELS.regrowth])
    if (compiled !== undefined) await compiled
    const cells = n * n
    const out = { basins: new Float32Array(BASIN_SUMS * basins.length), regrowths: new Float32Array(REGROWTH_SUMS * erased.length) }
    if (!basins.length && !erased.length) return async () => out
    if (!this.held) throw new CrystalError('bad_argument', NOTHING_HELD)
    // the regrowths' sums after the basins', at the offset a storage binding may start at
    const align = device.limits.minStorageBufferOffsetAlignment
    const regrowthsAt = Math.ceil((out.basins.byteLength || 1) / align) * align
    const slots = new ArrayBuffer(2 * SLOT)
    packStruct(BASIN_LAYOUT, { cells, inverse_cells: Math.fround(1 / cells) }, slots, 0)
    new Uint8Array(slots, SLOT, 16).set(new Uint8Array(eraseUniform(n)))
    const { buffer, written, made } = this.scratch()
    const back = new Float32Array((regrowthsAt + out.regrowths.byteLength) / 4)
    let riding: (() => Promise<ArrayBuffer>) | undefined
    try {
      const uniform = written(new Uint8Array(slots), UNIFORM)
      const result = buffer(back.byteLength)
      const encoder = device.createCommandEncoder()
      const pass = encoder.beginComputePass()
      if (basins.length) {
        const kernel = pipelineOf(device, RECORD_KERNELS.basin)
        const [targets, kick] = [Uint32Array.from(basins), pattern].map((d) => ({ buffer: written(d) }))
        const bound = [
          targets,
          { buffer: this.held! },
          kick,
          { buffer: this.stability().sums },
          { buffer: result, size: out.basins.byteLength },
        ]
        this.bind(pass, kernel, { buffer: uniform, offset: 0, size: BASIN_LAYOUT.length * 4 }, bound)
        // a workgroup a kicked field
        transfers.dispatch(pass, basins.length)
      }
      if (erased.length) {
        const kernel = pipelineOf(device, ERASE_KERNELS.regrowth)
        const bound: [number, GPUBindingResource][] = [
          [0, { buffer: uniform, offset: SLOT, size: 16 }],
          [1, { buffer: written(planWords(erased)) }],
          [4, { buffer: this.held }],
          [5, { buffer: this.stability().sums }],
          [6, { buffer: result, offset: regrowthsAt, size: out.regrowths.byteLength }],
        ]
        pass.setPipeline(kernel)
        const entries = bound.map(([binding, resource]) => ({ binding, resource }))
        pass.setBindGroup(0, device.createBindGroup({ layout: kernel.getBindGroupLayout(0), entries }))
        // a workgroup an erased field
        transfers.dispatch(pass, erased.length)
      }
      pass.end()
      if (ride) {
        transfers.submit(encoder)
        riding = transfers.ride(result, 0, back.byteLength, () => this.gpu.failure())
      } else await transfers.readInto(result, 0, encoder, () => this.gpu.failure(), back)
    } finally {
      // after the copy aside that rides (submitted first where it waits)
      for (const b of made) transfers.destroy(b)
    }
    return async () => {
      if (riding) back.set(new Float32Array(await riding()))
      this.gpu.check()
      out.basins.set(back.subarray(0, out.basins.length))
      out.regrowths.set(back.subarray(regrowthsAt / 4))
      return out
    }
  }

  /** Buffers made for one submit (`made`, destroyed by the caller once it is read), and `written` ones holding data. */
  private scratch() {
    const made: GPUBuffer[] = []
    const buffer = (bytes: number, usage = STORAGE) => {
      const b = this.gpu.device.createBuffer({ size: Math.max(4, bytes), usage })
      made.push(b)
      return b
    }
    const written = (data: ArrayBufferView & { buffer: ArrayBufferLike }, usage = STORAGE) => {
      const b = buffer(data.byteLength, usage)
      this.gpu.transfers.write(b, 0, data)
      return b
    }
    return { made, buffer, written }
  }

  /** `kernel` set on `pass` with its uniform at binding 0 and `resources` at bindings 1, 2, ... */
  private bind(pass: GPUComputePassEncoder, kernel: GPUComputePipeline, uniform: GPUBufferBinding, resources: GPUBindingResource[]): void {
    pass.setPipeline(kernel)
    const entries = [uniform, ...resources].map((resource, binding) => ({ binding, resource }))
    pass.setBindGroup(0, this.gpu.device.createBindGroup({ layout: kernel.getBindGroupLayout(0), entries }))
  }

  /** A 1D kernel's `invocations` as workgroups of WG, on a 2D grid past 65535 of them. */
  private dispatch(pass: GPUComputePassEncoder, invocations: number): void {
    const workgroups = Math.ceil(invocations / WG)
    this.gpu.transfers.dispatch(pass, Math.min(workgroups, 65535), Math.ceil(workgroups / 65535))
  }

  private release(): void {
    const { transfers } = this.gpu
    for (const b of [...this.chunks, this.tail, this.window?.coef, this.window?.uniform]) if (b) transfers.keep(b)
    this.tail = undefined
    this.chunks = []
    this.window = undefined
  }

  destroy(): void {
    this.release()
    this.labeller?.destroy()
    this.labeller = undefined
    // the sums held outlive a window's planes (a new window may start between the hold and its use)
    if (this.held) this.gpu.transfers.keep(this.held)
    this.held = undefined
    this.frames = 0
  }
}

/** The lists of cells whose power sums a gather makes (GpuRecorder.gather), in groups whose planes fit one scratch buffer. */
interface ListPlan {
  /** Every list's cells, as indices into [field][cell], list by list, field by field. */
  cells: Uint32Array
  /** Per list, the rows of its group's scratch where it begins and where it ends. */
  bounds: Uint32Array
  lists: number
  groups: { firstList: number; lists: number; firstRow: number; rows: number }[]
  /** The rows of the largest group. */
  mostRows: number
}

/** The lists of every field of `reads` (fields of `cells` cells), in groups whose cells' planes fit `limit` bytes. */
function listPlan(reads: readonly WindowReads[], cells: number, planes: number, limit: number): ListPlan {
  const lists = reads.reduce((a, r) => a + r.ends.length, 0)
  const all = new Uint32Array(reads.reduce((a, r) => a + r.lists.length, 0))
  const bounds = new Uint32Array(2 * lists)
  const perGroup = Math.max(1, Math.floor(limit / (planes * 4)))
  const groups: ListPlan['groups'] = []
  let [at, l] = [0, 0]
  for (const [f, r] of reads.entries()) {
    // the field's lists copied whole, then made indices into [field][cell] (a copy and an add where an
    // index a cell: 16% less time over 20 M cells; the H200's profile put listPlan at 55 ms a generation)
    const listed = r.ends.length ? r.ends[r.ends.length - 1] : 0
    all.set(r.lists.subarray(0, listed), at)
    const base = f * cells
    for (let i = at, end = at + listed; i < end; i++) all[i] += base
    for (let k = 0, start = 0; k < r.ends.length; start = r.ends[k++], l++) {
      const rows = r.ends[k] - start
      let group = groups[groups.length - 1]
      if (!group || group.rows + rows > perGroup) groups.push((group = { firstList: l, lists: 0, firstRow: at, rows: 0 }))
      bounds[2 * l] = group.rows
      bounds[2 * l + 1] = group.rows + rows
      at += rows
      group.rows += rows
      group.lists++
    }
  }
  return { cells: all, bounds, lists, groups, mostRows: Math.max(0, ...groups.map((g) => g.rows)) }
}
