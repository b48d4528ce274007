// A recorded window kept on the GPU and reduced there: each captured frame of u is added into the
// window's planes by shaders/spectra.wgsl (sum u, sum |u|, the windowed DFT sums; no frame is kept
// or read back). What comes back is what detection reads: the stability plane (sum |u|) of every
// cell with the stability sums (the dream's, shaders/dream.wgsl accumulate) and u, in one read;
// then every plane of the cells detection reads (shaders/gather.wgsl), in one more. CPU twin:
// engine/cpu/record.ts; tests: engine/detect/spectra.test.ts, engine/discovery/record.test.ts.
import type { WindowRecorder, WindowRecording } from '../field/backend.js'
import type { WindowReads } from '../detect/detect.js'
import { MODAL_CELLS, modalSamples } from '../detect/modal.js'
import { giveBack, HeldPlanes, reusedFloats, windowCoefficients, windowPlanes, windowTotals } from '../detect/spectra.js'
import { CrystalError } from '../errors.js'
import { packStruct, wgslStruct } from '../field/params.js'
import { kernelModule, perDevice, type GpuContext } from './context.js'
import { SHADERS } from './shaders.gen.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
const WG = 256
/** The uniform's slots, one per chunk of planes, at the 256-byte offsets a dynamic offset needs. */
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
/** shaders/modal.wgsl's uniform: windows of the group, its first window, planes a cell, bins, 1 / frames. */
const MODAL_LAYOUT = [
  ['count', 'u32'],
  ['base', 'u32'],
  ['planes', 'u32'],
  ['bins', 'u32'],
  ['inverse_frames', 'f32'],
] as const
/** Planes of the tail read back first: the stability plane (sum |u|), the stability sums, u. */
const TAIL = 3

export class GpuRecorder implements WindowRecorder {
  /** Buffers of whole planes. */
  private chunks: GPUBuffer[] = []
  /** The planes read back first (TAIL), copied here from the chunks, the sums and u. */
  private tail: GPUBuffer | undefined
  private perChunk = 1
  private frames = 0
  /** The window's factors and the uniform's slots, made with its chunks; the kernel, made once. */
  private window: { coef: GPUBuffer; uniform: GPUBuffer; pipeline: GPUComputePipeline } | undefined

  constructor(
    private readonly gpu: GpuContext,
    private readonly sums: () => GPUBuffer,
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
    this.tail = transfers.buffer(Math.min(TAIL, this.perTail) * bytes, STORAGE)
    const factors = windowCoefficients(Math.max(1, frames))
    const coef = transfers.buffer(factors.byteLength, STORAGE)
    transfers.write(coef, 0, factors.buffer as ArrayBuffer)
    const uniform = transfers.buffer(count * SLOT, UNIFORM)
    const pipeline = perDevice(device, 'spectra:accumulate', () =>
      device.createComputePipeline({
        layout: 'auto',
        compute: { module: kernelModule(device, '', SHADERS.spectra), entryPoint: 'accumulate' },
      }),
    )
    this.window = { coef, uniform, pipeline }
  }

  capture(slot: number, frames: number): Promise<void> {
    if (slot === 0 && frames !== this.frames) this.allocate(frames)
    if (!this.window) throw new CrystalError('bad_argument', `captureFrame: slot ${slot} of a window that slot 0 did not start`)
    const { coef, uniform: slots, pipeline } = this.window
    const { device, n, fields, transfers } = this.gpu
    const size = n * n * fields
    const uniform = new ArrayBuffer(this.chunks.length * SLOT)
    for (let c = 0; c < this.chunks.length; c++)
      new Uint32Array(uniform, c * SLOT, 5).set([
        size,
        slot,
        c * this.perChunk,
        Math.min(this.perChunk, this.planes - c * this.perChunk),
        this.planes,
      ])
    transfers.write(slots, 0, uniform)
    const encoder = device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    pass.setPipeline(pipeline)
    const groups = Math.ceil(size / WG)
    for (const [c, chunk] of this.chunks.entries()) {
      const bound = Math.min(this.perChunk, this.planes - c * this.perChunk) * this.planeBytes
      const entries = [
        { binding: 0, resource: { buffer: slots, offset: c * SLOT, size: 32 } },
        { binding: 1, resource: { buffer: this.gpu.state().u } },
        { binding: 2, resource: { buffer: coef } },
        { binding: 3, resource: { buffer: chunk, size: bound } },
      ]
      pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }))
      this.gpu.transfers.dispatch(pass, Math.min(groups, 65535), Math.ceil(groups / 65535))
    }
    pass.end()
    this.gpu.transfers.submit(encoder)
    return Promise.resolve()
  }

  /**
   * The stability plane, the stability sums and u (`full`; u unless `u` is false), or the sums alone,
   * in one read (one a plane where three planes exceed the largest buffer); the other planes stay on
   * the GPU until `gather` brings back those of the cells asked for. What comes back is on shared
   * memory (reusedFloats): worker threads detect on it without a copy, and `release` gives it back.
   */
  async collect(full: boolean, u = full): Promise<WindowRecording> {
    if (!this.chunks.length) this.allocate(0)
    const bytes = this.planeBytes
    const floats = bytes / 4
    const tail = this.tail!
    const withU = full && u
    // the planes in the order they come back: plane 1 (sum |u|) from the chunk that holds it, the sums, u
    const planes: [GPUBuffer, number][] = []
    if (full) planes.push([this.chunks[Math.floor(1 / this.perChunk)], (1 % this.perChunk) * bytes])
    planes.push([this.sums(), 0])
    if (withU) planes.push([this.gpu.state().u, 0])
    const back = reusedFloats(planes.length * floats)
    const used = [back]
    for (let first = 0; first < planes.length; first += this.perTail) {
      const group = planes.slice(first, first + this.perTail)
      const encoder = this.gpu.device.createCommandEncoder()
      group.forEach(([source, offset], k) => encoder.copyBufferToBuffer(source, offset, tail, k * bytes, bytes))
      const into = back.subarray(first * floats, (first + group.length) * floats)
      await this.gpu.transfers.readInto(tail, 0, encoder, () => this.gpu.failure(), into)
    }
    this.gpu.check()
    const cells = this.gpu.n * this.gpu.n
    const sums = full ? back.subarray(floats, 2 * floats) : back
    const held = Array.from({ length: full ? this.gpu.fields : 0 }, (_, f) => new HeldPlanes(f, back.subarray(f * cells, (f + 1) * cells)))
    return {
      frames: this.frames,
      window: (f) => {
        if (!held[f]) throw new CrystalError('bad_argument', `the recorded window of field ${f} was not asked for (collect(full))`)
        return held[f]
      },
      sums,
      u: withU ? back.subarray(2 * floats) : new Float32Array(0),
      gather: async (reads) => {
        const gathered = await this.gather(reads, held)
        if (gathered) used.push(gathered)
      },
      release: () => {
        for (const floats of used.splice(0)) giveBack(floats)
      },
    }
  }

  /**
   * Per field, every plane of the cells listed and the modal sums of the windows listed
   * (engine/detect/modal.ts: shaders/modal.wgsl over those cells' planes, gathered into a scratch
   * buffer first), read back in one read (one more for each maxBufferSize the planes of the cells
   * take; the first holds the modal sums), into the fields' windows; returns the floats they are held
   * in (none where nothing is listed).
   */
  private async gather(reads: readonly WindowReads[], held: HeldPlanes[]): Promise<Float32Array | undefined> {
    const { device, transfers } = this.gpu
    const cells = this.gpu.n * this.gpu.n
    const planes = this.planes
    const modal = modalPlan(reads, this.gpu.n, planes, this.limit)
    const listedCells = reads.reduce((a, r) => a + r.cells.length, 0)
    // the cells listed, then the modal maps' cells, as indices into [field][cell]
    const listed = new Uint32Array(listedCells + modal.cells.length)
    // indexed loops: over a million cells at population 1,000, where for-of took 40 ms a gather
    for (let f = 0, j = 0; f < reads.length; f++) {
      const w = reads[f].cells
      for (let k = 0; k < w.length; k++) listed[j++] = f * cells + w[k]
    }
    listed.set(modal.cells, listedCells)
    if (!listed.length) return undefined
    const size = ((planes - 2) / 2) * MODAL_CELLS
    // the modal sums first, to a 256-byte boundary, where the cells' binding may start
    const modalFloats = Math.ceil((modal.windows * size) / 64) * 64
    // the gathered planes of a read within one buffer
    const perRead = Math.max(1, Math.floor((this.limit - modalFloats * 4) / (planes * 4)))
    const chunks = this.chunks.length
    // uniform slots: the cells' gather from each chunk; then per group of modal maps its gather from each chunk and its sums
    const groupSlot = (g: number) => chunks + g * (chunks + 1)
    const slots = new ArrayBuffer(groupSlot(modal.groups.length) * SLOT)
    const gatherSlot = (slot: number, count: number, base: number) => {
      for (let c = 0; c < chunks; c++) {
        const first = c * this.perChunk
        const values = { count, size: cells * this.gpu.fields, first, held: Math.min(this.perChunk, planes - first), planes, base }
        packStruct(GATHER_LAYOUT, values, slots, (slot + c) * SLOT)
      }
    }
    for (const [g, group] of modal.groups.entries()) {
      gatherSlot(groupSlot(g), group.rows, listedCells + group.firstRow)
      const values = { count: group.windows, base: group.firstWindow, planes, bins: (planes - 2) / 2, inverse_frames: 1 / this.frames }
      packStruct(MODAL_LAYOUT, values, slots, (groupSlot(g) + chunks) * SLOT)
    }
    const made: GPUBuffer[] = []
    const buffer = (bytes: number, usage = STORAGE) => {
      const b = device.createBuffer({ size: Math.max(4, bytes), usage })
      made.push(b)
      return b
    }
    const gathered = reusedFloats(modalFloats + listedCells * planes)
    try {
      const index = buffer(listed.byteLength)
      transfers.write(index, 0, listed)
      const uniform = buffer(slots.byteLength, UNIFORM)
      const bounds = buffer(modal.bounds.byteLength)
      transfers.write(bounds, 0, modal.bounds)
      const totals = buffer(windowTotals(this.frames).byteLength)
      transfers.write(totals, 0, windowTotals(this.frames))
      const scratch = buffer(modal.mostRows * planes * 4)
      const [gatherKernel, modalKernel] = [this.kernel('gather', GATHER_LAYOUT), this.kernel('modal', MODAL_LAYOUT)]
      /** shaders/gather.wgsl from each chunk into `out`, with the chunks' uniform slots from `slot`. */
      const gatherInto = (pass: GPUComputePassEncoder, slot: number, count: number, out: GPUBufferBinding) => {
        pass.setPipeline(gatherKernel)
        for (const [c, chunk] of this.chunks.entries()) {
          const entries = [
            { binding: 0, resource: { buffer: uniform, offset: (slot + c) * SLOT, size: GATHER_LAYOUT.length * 4 } },
            { binding: 1, resource: { buffer: index } },
            { binding: 2, resource: { buffer: chunk } },
            { binding: 3, resource: out },
          ]
          pass.setBindGroup(0, device.createBindGroup({ layout: gatherKernel.getBindGroupLayout(0), entries }))
          this.dispatch(pass, count)
        }
      }
      /** Per group of modal maps, its cells' planes into the scratch buffer, then its sums into the head of `out`. */
      const modalInto = (pass: GPUComputePassEncoder, out: GPUBuffer) => {
        for (const [g, group] of modal.groups.entries()) {
          if (group.rows) gatherInto(pass, groupSlot(g), group.rows, { buffer: scratch, size: group.rows * planes * 4 })
          pass.setPipeline(modalKernel)
          const entries = [
            { binding: 0, resource: { buffer: uniform, offset: (groupSlot(g) + chunks) * SLOT, size: MODAL_LAYOUT.length * 4 } },
            { binding: 1, resource: { buffer: bounds } },
            { binding: 2, resource: { buffer: scratch } },
            { binding: 3, resource: { buffer: totals } },
            { binding: 4, resource: { buffer: out, size: modalFloats * 4 } },
          ]
          pass.setBindGroup(0, device.createBindGroup({ layout: modalKernel.getBindGroupLayout(0), entries }))
          this.dispatch(pass, group.windows * size)
        }
      }
      for (let base = 0, first = true; first || base < listedCells; first = false) {
        const count = Math.min(perRead, listedCells - base)
        gatherSlot(0, count, base)
        transfers.write(uniform, 0, slots)
        const head = first ? modalFloats : 0
        const out = device.createBuffer({ size: Math.max(4, (head + count * planes) * 4), usage: STORAGE })
        const encoder = device.createCommandEncoder()
        const pass = encoder.beginComputePass()
        if (count) gatherInto(pass, 0, count, { buffer: out, offset: head * 4, size: count * planes * 4 })
        if (head) modalInto(pass, out)
        pass.end()
        try {
          const into = gathered.subarray(first ? 0 : modalFloats + base * planes, modalFloats + (base + count) * planes)
          await transfers.readInto(out, 0, encoder, () => this.gpu.failure(), into)
        } finally {
          out.destroy()
        }
        base += count
      }
    } finally {
      for (const b of made) b.destroy()
    }
    this.gpu.check()
    let from = modalFloats
    let window = 0
    for (const [f, r] of reads.entries()) {
      held[f].hold(r.cells, gathered, from, planes, { windows: r.modal, modalFrom: window * size, modalSize: size })
      from += r.cells.length * planes
      window += r.modal.length / 3
    }
    return gathered
  }

  /** shaders/<name>.wgsl's kernel of that name, with its uniform struct (`layout`), made once a device. */
  private kernel(name: 'gather' | 'modal', layout: Parameters<typeof wgslStruct>[1]): GPUComputePipeline {
    const { device } = this.gpu
    const struct = wgslStruct(name === 'gather' ? 'Gather' : 'Modal', layout)
    return perDevice(device, `${name}:${name}`, () =>
      device.createComputePipeline({ layout: 'auto', compute: { module: kernelModule(device, struct, SHADERS[name]), entryPoint: name } }),
    )
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
    this.frames = 0
  }
}

/** The modal maps of a gather (GpuRecorder.gather): their cells, and the groups whose planes fit one scratch buffer. */
interface ModalPlan {
  /** Every window's sampled cells (engine/detect/modal.ts modalSamples), as indices into [field][cell], window by window. */
  cells: Uint32Array
  /** Per window, 17 rows of its group's scratch: where each of its blocks begins, then where its last ends. */
  bounds: Uint32Array
  windows: number
  groups: { firstWindow: number; windows: number; firstRow: number; rows: number }[]
  /** The rows of the largest group. */
  mostRows: number
}

/** The modal windows of every field of `reads`, in groups whose cells' planes fit `limit` bytes. */
function modalPlan(reads: readonly WindowReads[], n: number, planes: number, limit: number): ModalPlan {
  const samples = reads.flatMap((r, f) =>
    Array.from({ length: r.modal.length / 3 }, (_, k) => ({
      f,
      s: modalSamples(n, r.modal[3 * k], r.modal[3 * k + 1], r.modal[3 * k + 2]),
    })),
  )
  const cells = new Uint32Array(samples.reduce((a, { s }) => a + s.cells.length, 0))
  const bounds = new Uint32Array(samples.length * (MODAL_CELLS + 1))
  const perGroup = Math.max(1, Math.floor(limit / (planes * 4)))
  const groups: ModalPlan['groups'] = []
  let at = 0
  for (const [w, { f, s }] of samples.entries()) {
    const rows = s.cells.length
    let group = groups[groups.length - 1]
    if (!group || group.rows + rows > perGroup) groups.push((group = { firstWindow: w, windows: 0, firstRow: at, rows: 0 }))
    for (let b = 0; b < MODAL_CELLS; b++) bounds[w * (MODAL_CELLS + 1) + b] = group.rows + (b ? s.ends[b - 1] : 0)
    bounds[w * (MODAL_CELLS + 1) + MODAL_CELLS] = group.rows + rows
    for (let k = 0; k < rows; k++) cells[at + k] = f * n * n + s.cells[k]
    group.rows += rows
    group.windows++
    at += rows
  }
  return { cells, bounds, windows: samples.length, groups, mostRows: Math.max(0, ...groups.map((g) => g.rows)) }
}
