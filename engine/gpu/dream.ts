// The dream on the GPU (shaders/dream.wgsl): stability sums, exact percentile thresholds by a
// radix select over histograms, masks, smoothing, the scale edit in place and the kicks, with only
// each field's outcome (counts, thresholds, an 8 x 8 preview) read back. CPU twin: engine/cpu/dream.ts.
import { BLUR_INV } from '../field/blur.js'
import type { DeviceMask, DreamOps, EditOutcome, FieldEdit } from '../field/backend.js'
import { keptEdits, percentileRank } from '../cpu/dream.js'
import { DREAM_PARAM_LAYOUT, packStruct, TILE, wgslStruct } from '../field/params.js'
import { compiling, type GpuContext, type Kernel, kernelModule, perDevice, pipelineOf } from './context.js'
import { SHADERS } from './shaders.gen.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
const BINS = 65536
const PLAN_WORDS = 8
const WG = 256
/** A field's histograms: the top bits', then the low bits' of each of its two thresholds. */
export const HISTOGRAM_BYTES = 3 * BINS * 4
/** The uniform block: DREAM_PARAM_LAYOUT's 4-byte members in 16-byte rows. */
const UNIFORM_BYTES = Math.ceil(DREAM_PARAM_LAYOUT.length / 4) * 16

const ENTRIES = [
  'accumulate',
  'histogram_high',
  'select_high',
  'histogram_low',
  'select_low',
  'edit_mask',
  'blur',
  'apply',
  'preview',
] as const
type Entry = (typeof ENTRIES)[number]

// every entry point from one module
const dreamModule = (device: GPUDevice) =>
  perDevice(device, 'dream', () => {
    const inv = `const INV = array<f32, 10>(${[...BLUR_INV].map((v) => v.toPrecision(17)).join(', ')});\n`
    return kernelModule(device, wgslStruct('Dream', DREAM_PARAM_LAYOUT), SHADERS.dream, inv)
  })

/** The dream's kernels (context.ts Kernel) by entry point, made once a device. */
export const DREAM_KERNELS = Object.fromEntries(
  ENTRIES.map((entry): [Entry, Kernel] => [
    entry,
    { key: `dream:${entry}`, describe: (device) => ({ layout: 'auto', compute: { module: dreamModule(device), entryPoint: entry } }) },
  ]),
) as Record<Entry, Kernel>

/** What each of the dream's calls uses: it waits for those of them still compiling ahead (context.ts compileAhead). */
const USES = {
  scale: [DREAM_KERNELS.apply],
  accumulate: [DREAM_KERNELS.accumulate],
  edit: ENTRIES.filter((e) => e !== 'accumulate').map((e) => DREAM_KERNELS[e]),
}

/** The buffers a dream needs beyond the field: made on the first dream, kept for the next. */
interface Scratch {
  acc: GPUBuffer
  /**
   * The edit's histograms (768 KiB a field) for a group of `grouped` fields, made on the first edit: an
   * engine that only records stability or scales (a batch extracted to be perturbed) never uses them.
   */
  hist: GPUBuffer | undefined
  /** Fields a group's histograms hold: all of them unless they exceed a buffer or a binding (at population 1,000, 1.5 GB). */
  grouped: number
  /** Each group's fields and uniform, the first group's `uniform` itself (the one the other entries read). */
  groups: { first: number; count: number; uniform: GPUBuffer }[]
  plan: GPUBuffer
  picks: GPUBuffer
  tally: GPUBuffer
  masks: [GPUBuffer, GPUBuffer]
  kicks: GPUBuffer
  uniform: GPUBuffer
  /** The preview's side the uniform holds: an edit with the same, or without a preview, writes nothing (a write would submit the samples handed over that read it). */
  uniformSide: number
}

/** The uniform of the group of `count` fields from `first` on, with the preview's `side`. */
function uniformBytes(n: number, fields: number, { first, count }: { first: number; count: number }, side: number): ArrayBuffer {
  const bytes = new ArrayBuffer(UNIFORM_BYTES)
  packStruct(DREAM_PARAM_LAYOUT, { n, fields, cells: n * n, side, first, count }, bytes)
  return bytes
}

/** Every buffer of the scratch (what an edit handed over names, and what goes back to the kept ones). */
const scratchBuffers = ({ acc, hist, plan, picks, tally, masks, kicks, groups }: Scratch): GPUBuffer[] => [
  acc,
  ...(hist ? [hist] : []),
  plan,
  picks,
  tally,
  ...masks,
  kicks,
  ...groups.map((g) => g.uniform),
]

export class GpuDreamOps implements DreamOps {
  private scratch: Scratch | undefined
  /** accumulate's bind group by the state buffer it reads (one of the step's three), with the scratch */
  private accumulateGroups = new WeakMap<GPUBuffer, GPUBindGroup>()
  /** Samples in the stability sums (taken). */
  private samples = 0
  private preview: { side: number; buffer: GPUBuffer } | undefined

  constructor(private readonly gpu: GpuContext) {}

  private pipeline(entry: Entry): GPUComputePipeline {
    return pipelineOf(this.gpu.device, DREAM_KERNELS[entry])
  }

  private buffers(): Scratch {
    if (this.scratch) return this.scratch
    const { n, fields } = this.gpu
    const cells = n * n * fields
    // kept between engines (Transfers.buffer): the histograms alone are 1.5 GB at population 1,000
    const buffer = (bytes: number, usage = STORAGE) => this.gpu.transfers.buffer(bytes, usage)
    // a select's workgroups are a dispatch's x: two a field of the group
    const room = Math.min(this.gpu.bindingBytes, this.gpu.device.limits.maxBufferSize)
    const grouped = Math.min(fields, Math.max(1, Math.floor(room / HISTOGRAM_BYTES)), 32767)
    const groups = Array.from({ length: Math.ceil(fields / grouped) }, (_, g) => {
      const group = { first: g * grouped, count: Math.min(grouped, fields - g * grouped), uniform: buffer(UNIFORM_BYTES, UNIFORM) }
      this.gpu.transfers.write(group.uniform, 0, uniformBytes(n, fields, group, 0))
      return group
    })
    this.scratch = {
      acc: buffer(cells * 4),
      hist: undefined,
      grouped,
      groups,
      plan: buffer(fields * PLAN_WORDS * 4),
      picks: buffer(fields * 6 * 4),
      tally: buffer(fields * 4 * 4),
      masks: [buffer(cells * 4), buffer(cells * 4)],
      kicks: buffer(cells * 4),
      uniform: groups[0].uniform,
      uniformSide: 0,
    }
    return this.scratch
  }

  /** A bind group for one entry, from the resources by binding number (its auto layout takes only those it uses). */
  private group(entry: Entry, resources: Record<number, GPUBuffer>): GPUBindGroup {
    const pipeline = this.pipeline(entry)
    return this.gpu.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: Object.entries(resources).map(([binding, buffer]) => ({ binding: Number(binding), resource: { buffer } })),
    })
  }

  /** `entry` over every cell (or the first `cells`), bound to `resources` (or a bind group made of them before). */
  private dispatchCells(
    pass: GPUComputePassEncoder,
    entry: Entry,
    resources: Record<number, GPUBuffer>,
    group?: GPUBindGroup,
    cells = this.gpu.n * this.gpu.n * this.gpu.fields,
  ): void {
    const groups = Math.ceil(cells / WG)
    pass.setPipeline(this.pipeline(entry))
    pass.setBindGroup(0, group ?? this.group(entry, resources))
    this.gpu.transfers.dispatch(pass, Math.min(groups, 65535), Math.ceil(groups / 65535))
  }

  /** The stability sums' buffer, [field][cell] (the recorder reads it with its frames). */
  sums(): GPUBuffer {
    return this.buffers().acc
  }

  /** The samples the stability sums hold: accumulateStability's since it last reset them. */
  get taken(): number {
    return this.samples
  }

  async scale(mask: Float32Array): Promise<void> {
    const compiled = compiling(this.gpu.device, USES.scale)
    if (compiled !== undefined) await compiled
    const s = this.buffers()
    this.gpu.transfers.write(s.masks[0], 0, mask)
    const encoder = this.gpu.device.createCommandEncoder()
    encoder.clearBuffer(s.kicks)
    const pass = encoder.beginComputePass()
    const { u, prev } = this.gpu.state()
    const resources = { 0: s.uniform, 1: u, 2: prev, 8: s.masks[0], 10: s.kicks }
    this.dispatchCells(pass, 'apply', resources)
    pass.end()
    // with the work after it (the held sums after, the recovery steps)
    this.gpu.transfers.submitWithNext(encoder, Object.values(resources))
  }

  async stabilitySums(): Promise<Float32Array> {
    const { device, n, fields, transfers } = this.gpu
    const read = await transfers.read(this.sums(), 0, n * n * fields * 4, device.createCommandEncoder(), () => this.gpu.failure())
    this.gpu.check()
    return new Float32Array(read)
  }

  async accumulateStability(reset: boolean): Promise<void> {
    const compiled = compiling(this.gpu.device, USES.accumulate)
    if (compiled !== undefined) await compiled
    const s = this.buffers()
    const encoder = this.gpu.device.createCommandEncoder()
    if (reset) encoder.clearBuffer(s.acc)
    this.samples = reset ? 1 : this.samples + 1
    const pass = encoder.beginComputePass()
    const { u } = this.gpu.state()
    const resources = { 0: s.uniform, 1: u, 3: s.acc }
    let group = this.accumulateGroups.get(u)
    if (!group) this.accumulateGroups.set(u, (group = this.group('accumulate', resources)))
    this.dispatchCells(pass, 'accumulate', resources, group)
    pass.end()
    // a sample is taken between steps: it goes with the steps after it (in a submit with others)
    this.gpu.transfers.submitWithNext(encoder, [s.uniform, u, s.acc])
  }

  async edit(
    edits: readonly (FieldEdit | null)[],
    passes: number,
    side: number,
    keep: number,
    report: boolean,
  ): Promise<{ outcomes: () => Promise<EditOutcome[]>; masks: (DeviceMask | null)[] }> {
    const { device, n, fields, transfers } = this.gpu
    const compiled = compiling(device, USES.edit)
    if (compiled !== undefined) await compiled
    const s = this.buffers()
    const hist = (s.hist ??= transfers.buffer(s.grouped * HISTOGRAM_BYTES, STORAGE))
    const cells = n * n
    if (this.preview?.side !== side) {
      if (this.preview) transfers.destroy(this.preview.buffer)
      this.preview = { side, buffer: device.createBuffer({ size: fields * side * side * 4, usage: STORAGE }) }
    }
    const previewBuf = this.preview.buffer
    // the side is the preview's alone: an edit without it leaves the uniform as it is
    if (report && s.uniformSide !== side) {
      transfers.write(s.uniform, 0, uniformBytes(n, fields, s.groups[0], side))
      s.uniformSide = side
    }
    const plan = new ArrayBuffer(fields * PLAN_WORDS * 4)
    const words = new Uint32Array(plan)
    const floats = new Float32Array(plan)
    edits.forEach((e, f) => {
      if (!e) return
      const at = f * PLAN_WORDS
      words[at] = 1
      words[at + 1] = e.key >>> 0
      floats[at + 2] = e.prune_factor
      floats[at + 3] = e.amplify_factor
      floats[at + 4] = e.mutate_fraction
      floats[at + 5] = e.mutate_amplitude
      words[at + 6] = percentileRank(e.prune_percentile, cells)
      words[at + 7] = percentileRank(e.amplify_percentile, cells)
    })
    transfers.write(s.plan, 0, plan)
    const { u, prev } = this.gpu.state()
    const encoder = device.createCommandEncoder()
    encoder.clearBuffer(s.tally)
    // the thresholds, a group of fields at a time, each group's histograms in the one buffer
    for (const { count, uniform } of s.groups) {
      encoder.clearBuffer(hist)
      const pass = encoder.beginComputePass()
      this.dispatchCells(pass, 'histogram_high', { 0: uniform, 1: u, 3: s.acc, 4: hist, 7: s.tally }, undefined, count * cells)
      pass.setPipeline(this.pipeline('select_high'))
      pass.setBindGroup(0, this.group('select_high', { 0: uniform, 4: hist, 5: s.plan, 6: s.picks }))
      this.gpu.transfers.dispatch(pass, 2 * count)
      this.dispatchCells(pass, 'histogram_low', { 0: uniform, 3: s.acc, 4: hist, 6: s.picks }, undefined, count * cells)
      pass.setPipeline(this.pipeline('select_low'))
      pass.setBindGroup(0, this.group('select_low', { 0: uniform, 4: hist, 6: s.picks }))
      this.gpu.transfers.dispatch(pass, 2 * count)
      pass.end()
    }
    const pass = encoder.beginComputePass()
    this.dispatchCells(pass, 'edit_mask', { 0: s.uniform, 3: s.acc, 5: s.plan, 6: s.picks, 7: s.tally, 9: s.masks[0], 10: s.kicks })
    // ping-pong: pass k reads masks[k % 2] and writes the other
    const tiles = Math.ceil(n / TILE)
    pass.setPipeline(this.pipeline('blur'))
    for (let k = 0; k < passes; k++) {
      pass.setBindGroup(0, this.group('blur', { 0: s.uniform, 8: s.masks[k % 2], 9: s.masks[(k + 1) % 2] }))
      this.gpu.transfers.dispatch(pass, tiles, tiles, fields)
    }
    const smooth = s.masks[passes % 2]
    this.dispatchCells(pass, 'apply', { 0: s.uniform, 1: u, 2: prev, 8: smooth, 10: s.kicks })
    if (report) {
      pass.setPipeline(this.pipeline('preview'))
      pass.setBindGroup(0, this.group('preview', { 0: s.uniform, 3: s.acc, 11: previewBuf }))
      this.gpu.transfers.dispatch(pass, side * side, fields)
    }
    pass.end()
    // the history keeps each edited field's mask on the device, for recall's sweep (the last `keep` of them)
    const kept = keptEdits(edits, keep)
    const copies: GPUBuffer[] = []
    const masks = edits.map((_, f) => {
      if (!kept.has(f)) return null
      const mask = device.createBuffer({ size: cells * 4, usage: STORAGE })
      encoder.copyBufferToBuffer(smooth, f * cells * 4, mask, 0, cells * 4)
      copies.push(mask)
      return this.gpu.keepMask(mask)
    })
    if (!report) {
      // evolve's: nothing to read, so it goes with the work after it (the held sums, the settling steps)
      transfers.submitWithNext(encoder, [...scratchBuffers(s), u, prev, previewBuf, ...copies])
      return { outcomes: async () => [], masks }
    }
    // the report: tally, picks and preview, copies that ride on the next read (the dream's books after)
    transfers.submitWithNext(encoder, [...scratchBuffers(s), u, prev, previewBuf, ...copies])
    const failure = () => this.gpu.failure()
    const [tallyBack, picksBack, previewBack] = [
      transfers.ride(s.tally, 0, fields * 16, failure),
      transfers.ride(s.picks, 0, fields * 24, failure),
      transfers.ride(previewBuf, 0, fields * side * side * 4, failure),
    ]
    const outcomes = async () => {
      const [tally, picks, preview] = [
        new Uint32Array(await tallyBack()),
        new Uint32Array(await picksBack()),
        new Float32Array(await previewBack()),
      ]
      this.gpu.check()
      const pickedValue = (bits: number) => new Float32Array(Uint32Array.of(bits).buffer)[0]
      return edits.map((e, f) => ({
        low: e ? pickedValue(picks[f * 6 + 2]) : 0,
        high: e ? pickedValue(picks[f * 6 + 5]) : 0,
        pruned: tally[f * 4 + 1],
        amplified: tally[f * 4 + 2],
        mutated: tally[f * 4 + 3],
        preview: Float64Array.from(preview.subarray(f * side * side, (f + 1) * side * side)),
      }))
    }
    return { outcomes, masks }
  }

  destroy(): void {
    if (this.preview) this.gpu.transfers.destroy(this.preview.buffer)
    this.preview = undefined
    if (!this.scratch) return
    for (const b of scratchBuffers(this.scratch)) this.gpu.transfers.keep(b)
    this.scratch = undefined
    this.accumulateGroups = new WeakMap()
  }
}
