// Recall's backward sweep on the GPU (shaders/adjoint.wgsl): the covector of the live field runs
// back step by step and through the dream's masks, which stay on the device; each reading reduces
// every pattern's correlation to one float in a scores buffer, and `results` reads back only that.
// CPU twin: AdjointField (engine/recall/adjoint.ts) behind CpuAdjointRunner (engine/recall/runner.ts).
import { CrystalError } from '../errors.js'
import type { AdjointRunner, EditMask } from '../field/backend.js'
import { packStruct, REDUCE_PARAM_LAYOUT, STEP_PARAM_LAYOUT, TILE, wgslStruct, type StepParams } from '../field/params.js'
import { kernelModule, type GpuContext } from './backend.js'
import { SHADERS } from './shaders.gen.js'

const STORAGE = 0x80 | 0x4 | 0x8
const UNIFORM = 0x40 | 0x8
const SLOT = 256
/** Dispatches per submit: work goes to the queue as the sweep is built, and nothing waits on it. */
const DISPATCHES_PER_SUBMIT = 512

type Entry = 'init' | 'step' | 'scale' | 'readout'
const modules = new WeakMap<GPUDevice, Map<Entry, GPUComputePipeline>>()

function pipeline(device: GPUDevice, entry: Entry): GPUComputePipeline {
  let byEntry = modules.get(device)
  if (!byEntry) modules.set(device, (byEntry = new Map()))
  let p = byEntry.get(entry)
  if (!p) {
    const module = kernelModule(device, wgslStruct('Params', STEP_PARAM_LAYOUT), SHADERS.adjoint)
    p = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: entry } })
    byEntry.set(entry, p)
  }
  return p
}

export class GpuAdjointRunner implements AdjointRunner {
  private readonly a: [GPUBuffer, GPUBuffer]
  private readonly b: GPUBuffer
  private readonly patterns: GPUBuffer
  private readonly partials: GPUBuffer
  private readonly scores: GPUBuffer
  private readonly uniform: GPUBuffer
  private readonly rows: GPUBuffer
  private readonly owned: GPUBuffer[] = []
  private readonly groups: number
  private readonly count: number
  private cur = 0 // a[cur] holds a
  private readings = 0
  private encoder: GPUCommandEncoder
  private pass: GPUComputePassEncoder
  private dispatches = 0
  private readonly stepGroups: GPUBindGroup[]
  private readonly readGroups: GPUBindGroup[]
  private readonly sumGroup: GPUBindGroup

  constructor(
    private readonly gpu: GpuContext,
    field: number,
    params: StepParams,
    patterns: readonly Float32Array[],
    private readonly capacity: number,
  ) {
    const { device, n, transfers } = gpu
    const cells = n * n
    this.count = patterns.length
    this.groups = Math.ceil(n / TILE)
    const tiles = this.groups * this.groups
    const buffer = (bytes: number, usage = STORAGE) => {
      const b = device.createBuffer({ size: Math.max(16, bytes), usage })
      this.owned.push(b)
      return b
    }
    this.a = [buffer(cells * 4), buffer(cells * 4)]
    this.b = buffer(cells * 4)
    this.patterns = buffer(this.count * cells * 4)
    this.partials = buffer(this.count * tiles * 4)
    this.scores = buffer(capacity * this.count * 4)
    this.uniform = buffer(STEP_PARAM_LAYOUT.length * 4, UNIFORM)
    this.rows = buffer(capacity * SLOT, UNIFORM)
    const u = buffer(cells * 4)
    const prev = buffer(cells * 4)

    this.writeParams(params)
    const all = new Float32Array(this.count * cells)
    patterns.forEach((w, p) => all.set(w, p * cells))
    transfers.write(this.patterns, 0, all)
    // reading k sums its tiles into scores[k * count ..]
    const rows = new ArrayBuffer(capacity * SLOT)
    for (let k = 0; k < capacity; k++) packStruct(REDUCE_PARAM_LAYOUT, { len: tiles, dst_offset: k * this.count }, rows, k * SLOT)
    transfers.write(this.rows, 0, rows)

    const group = (entry: Entry, resources: Record<number, GPUBuffer>) =>
      device.createBindGroup({ layout: pipeline(device, entry).getBindGroupLayout(0), entries: Object.entries(resources).map(([k, buf]) => ({ binding: Number(k), resource: { buffer: buf } })) })
    this.stepGroups = [0, 1].map((c) => group('step', { 0: this.uniform, 1: this.a[c], 2: this.b, 3: this.a[1 - c] }))
    this.readGroups = [0, 1].map((c) => group('readout', { 0: this.uniform, 1: this.a[c], 2: this.b, 4: this.patterns, 6: this.partials }))
    this.sumGroup = device.createBindGroup({
      layout: gpu.sumRows.layout,
      entries: [{ binding: 0, resource: { buffer: this.rows, size: 16 } }, { binding: 1, resource: { buffer: this.partials } }, { binding: 2, resource: { buffer: this.scores } }],
    })

    this.encoder = device.createCommandEncoder()
    const state = gpu.state()
    this.encoder.copyBufferToBuffer(state.u, field * cells * 4, u, 0, cells * 4)
    this.encoder.copyBufferToBuffer(state.prev, field * cells * 4, prev, 0, cells * 4)
    this.pass = this.encoder.beginComputePass()
    this.pass.setPipeline(pipeline(device, 'init'))
    this.pass.setBindGroup(0, group('init', { 0: this.uniform, 2: this.b, 3: this.a[0], 4: u, 5: prev }))
    this.pass.dispatchWorkgroups(this.groups, this.groups)
  }

  /** Counts a dispatch, and hands the queued work to the GPU every DISPATCHES_PER_SUBMIT. */
  private dispatched(): void {
    if (++this.dispatches % DISPATCHES_PER_SUBMIT) return
    this.pass.end()
    this.gpu.device.queue.submit([this.encoder.finish()])
    this.encoder = this.gpu.device.createCommandEncoder()
    this.pass = this.encoder.beginComputePass()
  }

  step(k?: Float32Array): void {
    // a saturating field's sweep runs on the CPU twin (engine/recall/runner.ts openAdjoint)
    if (k) throw new CrystalError('bad_argument', "the GPU sweep is linear: a saturating field's path is followed on the CPU twin")
    this.pass.setPipeline(pipeline(this.gpu.device, 'step'))
    this.pass.setBindGroup(0, this.stepGroups[this.cur])
    this.pass.dispatchWorkgroups(this.groups, this.groups)
    this.cur = 1 - this.cur
    this.dispatched()
  }

  /** New constants from here on: the work queued so far is submitted first, so it keeps the old ones. */
  setParams(p: StepParams): void {
    this.pass.end()
    this.gpu.device.queue.submit([this.encoder.finish()])
    this.writeParams(p)
    this.encoder = this.gpu.device.createCommandEncoder()
    this.pass = this.encoder.beginComputePass()
  }

  private writeParams(p: StepParams): void {
    const bytes = new ArrayBuffer(STEP_PARAM_LAYOUT.length * 4)
    packStruct(STEP_PARAM_LAYOUT, { ...p, fields: this.count, tiles_per_field: this.groups * this.groups }, bytes)
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
    this.pass.setBindGroup(0, device.createBindGroup({ layout: p.getBindGroupLayout(0), entries: [[0, this.uniform], [2, this.b], [3, this.a[this.cur]], [7, buffer]].map(([k, buf]) => ({ binding: k as number, resource: { buffer: buf as GPUBuffer } })) }))
    this.pass.dispatchWorkgroups(this.groups, this.groups)
    this.dispatched()
  }

  read(): number {
    const k = this.readings++
    if (k >= this.capacity) throw new RangeError(`the sweep was opened for ${this.capacity} readings`)
    this.pass.setPipeline(pipeline(this.gpu.device, 'readout'))
    this.pass.setBindGroup(0, this.readGroups[this.cur])
    this.pass.dispatchWorkgroups(this.groups, this.groups, this.count)
    this.pass.setPipeline(this.gpu.sumRows.pipeline)
    this.pass.setBindGroup(0, this.sumGroup, [k * SLOT])
    this.pass.dispatchWorkgroups(this.count)
    this.dispatched()
    return k
  }

  async results(): Promise<Float64Array> {
    this.pass.end()
    const bytes = this.readings * this.count * 4
    if (!bytes) {
      this.gpu.device.queue.submit([this.encoder.finish()])
      return new Float64Array(0)
    }
    const back = await this.gpu.transfers.read(this.scores, 0, bytes, this.encoder, () => this.gpu.failure())
    this.gpu.check()
    return Float64Array.from(new Float32Array(back))
  }

  destroy(): void {
    for (const b of this.owned) b.destroy()
  }
}
