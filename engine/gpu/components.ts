// Stability maps' components and their masses made where the maps live (shaders/components.wgsl):
// the first bricks of detection on the device (docs/detection.md, "What one read a generation would
// take", items 1 and 2). The recorder labels each window's map as it reads it back (engine/gpu/record.ts
// collect), so the detection pool ranks no map's components itself (PlaneSource.listed). Where asked,
// each listed component's shape as integers too, and a later window's sums over it (shapesOf), and
// for the first parts where their reads fall, their lists and those lists' power sums (placesOf,
// partListsOf, firstSumsOf; the recorder reads the sums back with the lists). CPU twins: labels(structureMask(map), n), rankedComponents and listedShapes
// (engine/detect/detect.ts); tests:
// engine/gpu/components.test.ts, engine/discovery/record.test.ts.
import { wgslStruct, packStruct } from '../field/params.js'
import {
  type Later,
  LEAST_LISTED_BINADE,
  LISTED,
  listedRoots,
  massUnit,
  MIN_AREA_CELLS,
  TOTAL_BITS,
  thresholdOf,
  TOP_PARTS,
  unitOfPeak,
} from '../detect/detect.js'
import { CANDIDATE_HEAD, CANDIDATE_WORDS, CANDIDATES } from '../detect/candidates.js'
import { MAX_SAMPLED_CELLS } from '../detect/dynamics.js'
import { windowPlanes, windowTotals } from '../detect/spectra.js'
import { MODAL_BLOCKS, OFFSET_BITS, type PartLists, type PartPlaces } from '../detect/placement.js'
import type { Candidates, FieldShapes, LaterSums, ShapeSums, TopPart, FieldTop, TopReads } from '../detect/sums.js'
import { CrystalError } from '../errors.js'
import { compiling, type GpuContext, type Kernel, kernelModule, perDevice, pipelineOf } from './context.js'
import { SHADERS } from './shaders.gen.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
const WG = 256
/**
 * The uniform: cells a field, its side, fields, floats between fields in `maps`, the first field's float,
 * what a map's value is multiplied by, 1 where the listed components' shapes are summed too, and 1
 * where a later window's sums over them too (`later_sums`: its first field's float, floats between
 * fields, and the samples those sums took, for the candidates' sustain).
 */
const COMPONENTS_LAYOUT = [
  ['cells', 'u32'],
  ['n', 'u32'],
  ['fields', 'u32'],
  ['stride', 'u32'],
  ['base', 'u32'],
  ['scale', 'f32'],
  ['shapes', 'u32'],
  ['later', 'u32'],
  ['later_base', 'u32'],
  ['later_stride', 'u32'],
  ['taken', 'u32'],
] as const
/** The uniform's bytes as bound: its members' (4 each), to a multiple of 16. */
const COMPONENTS_BYTES = Math.ceil((4 * COMPONENTS_LAYOUT.length) / 16) * 16
/**
 * `first_sums`' uniform (a group of fields and a chunk of the window's planes): floats a plane, the
 * chunk's first plane and planes held, DFT bins, 1 / frames, the group's first field.
 */
const PLANES_LAYOUT = [
  ['size', 'u32'],
  ['first', 'u32'],
  ['held', 'u32'],
  ['bins', 'u32'],
  ['inverse_frames', 'f32'],
  ['first_field', 'u32'],
] as const

const LABELLING = ['peak', 'mask', 'link', 'flatten', 'tally', 'list'] as const
const SHAPING = ['moments', 'centre', 'radii', 'bounds', 'sectors', 'rank'] as const
/** Where the first parts' reads fall, and the lists they read (where asked). */
const PLACING = ['places', 'lists', 'regions'] as const
const ENTRIES = [...LABELLING, ...SHAPING, ...PLACING] as const
type Entry = (typeof ENTRIES)[number]
/**
 * The words of a listed component's shape (shaders/components.wgsl: sums of x, y, x^2, y^2, x y and
 * the radii, two words each; centre x, y; bounds; reached; inner; the later sums' units, two words;
 * persistence's sums, three words each; the least and greatest column and row).
 */
const SHAPE_WORDS = 33
/** Where a field's candidates lie among its first parts' words (rank's table: candidateTable's twin). */
const CANDIDATES_AT = 3 + TOP_PARTS * (4 + SHAPE_WORDS)
/** The words of a field's first parts: its total's 2 and later peak, each part's list entry's 4 and its slot's, then its candidates. */
export const TOP_WORDS = CANDIDATES_AT + CANDIDATE_HEAD + CANDIDATES * CANDIDATE_WORDS
/**
 * The words of where a first part's reads fall (shaders/components.wgsl `places`): its box (4), c times
 * its window's half side (2), the window's rounded centre (2), 4 blocks' counts and 8 offsets each (36),
 * the circles' 64 cells.
 */
const PLACE_WORDS = 108
/** The words of a first part's lists (shaders/components.wgsl `lists`): its cells' sample and its mode's cells, a count and MAX_SAMPLED_CELLS cells each. */
const LIST_PART_WORDS = 2 * (1 + MAX_SAMPLED_CELLS)
/**
 * The words of a first part's regions (shaders/components.wgsl `regions`): which (REGION_KINDS), then
 * where halved each half's sample, a count and MAX_SAMPLED_CELLS cells.
 */
const REGION_WORDS = 1 + 2 * (1 + MAX_SAMPLED_CELLS)
/** What a first part's regions are, by the word `regions` writes (PartLists' regions). */
const REGION_KINDS = ['none', 'next', 'past', 'halved'] as const
/** A first part's lists whose power sums `first_sums` makes: its sample, its mode's cells, its halves, its modal map's blocks. */
export const FIRST_LISTS = 4 + MODAL_BLOCKS * MODAL_BLOCKS
/** The cells `first_modes` reads at a first part's mode: its sample's slots and the winding circles' 64 cells. */
const MODE_CELLS = MAX_SAMPLED_CELLS + 64
/** A first part's floats from `first_modes`: its mode's bin, then planes 0, 2 bin and 2 bin + 1 of each of its MODE_CELLS. */
export const MODE_FLOATS = 1 + 3 * MODE_CELLS
/** The words of a field's first parts' places, lists and regions. */
const PLACING_WORDS = TOP_PARTS * (PLACE_WORDS + LIST_PART_WORDS + REGION_WORDS)
/** The generated part of shaders/components.wgsl's module (kernelModule's struct): its uniform and constants. */
export const COMPONENTS_HEADER =
  `${wgslStruct('Components', COMPONENTS_LAYOUT)}const MIN_AREA: u32 = ${MIN_AREA_CELLS}u;\nconst LISTED: u32 = ${LISTED}u;\n` +
  `const OFFSET_BITS: u32 = ${OFFSET_BITS}u;\nconst SHAPE_WORDS: u32 = ${SHAPE_WORDS}u;\nconst TOTAL_BITS: u32 = ${TOTAL_BITS}u;\n` +
  `const TOP: u32 = ${TOP_PARTS}u;\nconst PLACE_WORDS: u32 = ${PLACE_WORDS}u;\nconst SAMPLED: u32 = ${MAX_SAMPLED_CELLS}u;\n` +
  `const MODAL_BLOCKS: u32 = ${MODAL_BLOCKS}u;\nconst CANDIDATES: u32 = ${CANDIDATES}u;\n${wgslStruct('Planes', PLANES_LAYOUT)}`
const componentsModule = (device: GPUDevice) =>
  perDevice(device, 'components:module', () => kernelModule(device, COMPONENTS_HEADER, SHADERS.components, SHADERS.integers))
const COMPUTE_STAGE = 0x4
/** One layout for every entry point (an 'auto' one leaves out what an entry does not use), so one bind group serves them all. */
const componentsLayout = (device: GPUDevice) =>
  perDevice(device, 'components:layout', () =>
    device.createBindGroupLayout({
      entries: [
        { binding: 0, visibility: COMPUTE_STAGE, buffer: { type: 'uniform' } },
        { binding: 1, visibility: COMPUTE_STAGE, buffer: { type: 'read-only-storage' } },
        { binding: 2, visibility: COMPUTE_STAGE, buffer: { type: 'storage' } },
        { binding: 3, visibility: COMPUTE_STAGE, buffer: { type: 'read-only-storage' } },
      ],
    }),
  )
const componentsKernel = (entry: Entry): Kernel => ({
  key: `components:${entry}`,
  describe: (device) => ({
    layout: device.createPipelineLayout({ bindGroupLayouts: [componentsLayout(device)] }),
    compute: { module: componentsModule(device), entryPoint: entry },
  }),
})
export const COMPONENTS_KERNELS = Object.fromEntries(ENTRIES.map((e) => [e, componentsKernel(e)])) as Record<Entry, Kernel>
/** `first_sums`' and `first_modes`' own bindings (group 1): their uniform, the chunk of plane 0, the chunk read and the next, the window's totals, the sums. */
const planesLayout = (device: GPUDevice) =>
  perDevice(device, 'components:planes', () =>
    device.createBindGroupLayout({
      entries: [
        { binding: 0, visibility: COMPUTE_STAGE, buffer: { type: 'uniform' } },
        ...[1, 2, 3, 4].map((binding) => ({ binding, visibility: COMPUTE_STAGE, buffer: { type: 'read-only-storage' as const } })),
        { binding: 5, visibility: COMPUTE_STAGE, buffer: { type: 'storage' } },
      ],
    }),
  )
const planesKernel = (entry: 'first_sums' | 'first_modes'): Kernel => ({
  key: `components:${entry}`,
  describe: (device) => ({
    layout: device.createPipelineLayout({ bindGroupLayouts: [componentsLayout(device), planesLayout(device)] }),
    compute: { module: componentsModule(device), entryPoint: entry },
  }),
})
const FIRST_SUMS_KERNEL = planesKernel('first_sums')
const FIRST_MODES_KERNEL = planesKernel('first_modes')

const LIST_WORDS = 1 + 4 * LISTED
/** The words a field's list and peak take in what comes back. */
export const LIST_AND_PEAK_WORDS = LIST_WORDS + 1
/** The words a field's shapes take, where they are summed: its total's two, its later sums' peak, then a slot a listed component. */
const SHAPES_WORDS = 3 + LISTED * SHAPE_WORDS

/** Where maps lie on the device: `buffer`'s floats from `base`, each field's `stride` floats after the last, each value times `scale`. */
export interface MapsOnDevice {
  buffer: GPUBuffer
  base: number
  stride: number
  /** Exact (a map's bits) where a power of two, as 1 / a window's 32 frames is. */
  scale: number
}

/** Where a later window's sums lie on the device (raw: no scale), and the samples each took. */
export type LaterOnDevice = Omit<MapsOnDevice, 'scale'> & { taken: number }

/** A window's planes where they lie ([plane][field][cell], `perChunk` planes a buffer in `chunks`, `planes` in all) and its frames. */
export interface WindowOnDevice {
  chunks: GPUBuffer[]
  perChunk: number
  planes: number
  frames: number
}

/**
 * A group of fields labelled in one binding: its first field, its fields, the byte offset in `out` of its
 * lists and peaks ([lists][peaks]), and of its shapes where they are summed (shapesOf), their first
 * parts after them (topOf); where asked, those parts' places and lists follow (placesOf, partListsOf).
 */
export interface LabelledGroup {
  first: number
  fields: number
  offset: number
  shapes?: number
  top?: number
}

/**
 * Labels stability maps where they lie (shaders/components.wgsl): `encode` adds the passes to an
 * encoder, in groups of fields that fit a storage binding, and says where each group's lists lie in
 * `out`, to be copied into a read (`listsOf` makes them what detection takes). Its buffers are kept
 * for the next call.
 */
export class GpuLabeller {
  private uniform: GPUBuffer | undefined
  out: GPUBuffer | undefined
  /** `first_sums`' uniform slots, the window's totals, and the first parts' power sums ([field][part][list][bin]). */
  private planesUniform: GPUBuffer | undefined
  private totals: GPUBuffer | undefined
  sums: GPUBuffer | undefined

  constructor(private readonly gpu: Pick<GpuContext, 'device' | 'transfers' | 'bindingBytes'>) {}

  /** The kernels the recorder runs, compiled (or still compiling ahead: what to wait for first). */
  static readonly kernels = [...ENTRIES.map((e) => COMPONENTS_KERNELS[e]), FIRST_SUMS_KERNEL, FIRST_MODES_KERNEL]

  /**
   * How `fields` maps of n x n cells go in groups: fields a group, its bytes (at a multiple of 256, a
   * binding's offset) and the bytes of `out`; undefined where one field's exceeds a binding.
   */
  static layout(
    n: number,
    fields: number,
    bindingBytes: number,
    shapes = false,
    places = false,
  ): { most: number; words: number; groupBytes: number; bytes: number } | undefined {
    // out's words a field: its list, its peak, its labels, its cells' tallies, its shapes and its first parts' places (shaders/components.wgsl)
    const words = LIST_AND_PEAK_WORDS + 4 * n * n + (shapes ? SHAPES_WORDS + TOP_WORDS : 0) + (places ? PLACING_WORDS : 0)
    // `lists` takes a workgroup a part
    const most = Math.min(fields, Math.floor(bindingBytes / 4 / words), places ? Math.floor(65535 / TOP_PARTS) : 65535)
    if (most < 1) return undefined
    const groupBytes = Math.ceil((most * words * 4) / 256) * 256
    return { most, words, groupBytes, bytes: Math.ceil(fields / most) * groupBytes }
  }

  /**
   * With `shapes`, each listed component's ShapeSums too, and with `later` (where each field's later
   * window's sums lie, raw, and the samples they took) those sums over it (shapesOf reads them) and the
   * field's candidates (topOf reads them); with `places` too, where its first
   * parts' reads fall (placesOf) and their lists (partListsOf); with `window` too (the maps' window's
   * planes), the power sums of those lists into `sums` (firstSumsOf).
   */
  encode(
    encoder: GPUCommandEncoder,
    maps: MapsOnDevice,
    n: number,
    fields: number,
    {
      shapes = false,
      later,
      places = false,
      window,
    }: { shapes?: boolean; later?: LaterOnDevice; places?: boolean; window?: WindowOnDevice } = {},
  ): LabelledGroup[] {
    const { device, transfers, bindingBytes } = this.gpu
    const cells = n * n
    if (places && !shapes) throw new CrystalError('internal', "a map's places are made from its shapes: ask for both")
    if (window && !places)
      throw new CrystalError('internal', "the first parts' power sums are made from their places and lists: ask for both")
    const layout = GpuLabeller.layout(n, fields, bindingBytes, shapes, places)
    if (!layout)
      throw new CrystalError('internal', `a map of ${n} x ${n} cells does not fit one storage binding of ${bindingBytes} bytes to label`)
    const { most, words, groupBytes, bytes } = layout
    const count = Math.ceil(fields / most)
    // kept between engines (Transfers.buffer): at population 1,000 some 300 MB, which evolve's two engines a
    // generation would otherwise make anew; every word a pass reads, an earlier pass wrote
    if (!this.out || this.out.size !== bytes) {
      if (this.out) transfers.keep(this.out)
      this.out = transfers.buffer(bytes, STORAGE, { cleared: false })
    }
    this.uniform = transfers.room(this.uniform, count * 256, UNIFORM)
    const values = new ArrayBuffer(count * 256)
    const groups = Array.from({ length: count }, (_, g): LabelledGroup => {
      const first = g * most
      const k = Math.min(most, fields - first)
      const at = {
        ...{ cells, n, fields: k, stride: maps.stride, base: maps.base + first * maps.stride, scale: maps.scale, shapes: +shapes },
        ...(shapes && later && { later: 1, later_base: later.base + first * later.stride, later_stride: later.stride, taken: later.taken }),
      }
      packStruct(COMPONENTS_LAYOUT, at, values, g * 256)
      const offset = g * groupBytes
      const shaped = offset + k * (LIST_AND_PEAK_WORDS + 4 * cells) * 4
      const top = shaped + k * SHAPES_WORDS * 4
      return { first, fields: k, offset, ...(shapes && { shapes: shaped, top }) }
    })
    transfers.write(this.uniform, 0, values)
    const summing = window && this.summing(window, n, groups)
    const pass = encoder.beginComputePass()
    const spread = Math.ceil(cells / WG)
    for (const { fields: k, offset } of groups) {
      const entries = [
        { binding: 0, resource: { buffer: this.uniform, offset: (offset / groupBytes) * 256, size: COMPONENTS_BYTES } },
        { binding: 1, resource: { buffer: maps.buffer } },
        { binding: 2, resource: { buffer: this.out, offset, size: k * words * 4 } },
        { binding: 3, resource: { buffer: later?.buffer ?? maps.buffer } },
      ]
      pass.setBindGroup(0, device.createBindGroup({ layout: componentsLayout(device), entries }))
      for (const entry of shapes ? (places ? ENTRIES : [...LABELLING, ...SHAPING]) : LABELLING) {
        pass.setPipeline(pipelineOf(device, COMPONENTS_KERNELS[entry]))
        // a workgroup a field, or a part of the field's first (`lists`), or a cell of a 2D grid
        if (entry === 'peak' || entry === 'rank' || entry === 'places') transfers.dispatch(pass, k)
        else if (entry === 'lists' || entry === 'regions') transfers.dispatch(pass, k * TOP_PARTS)
        else transfers.dispatch(pass, Math.min(spread, 65535), Math.ceil(spread / 65535), k)
      }
      // then each chunk's bins of the first parts' lists' power sums, then each chunk's planes at their modes
      if (summing && window) {
        const bound = window.chunks.map((chunk, c) => {
          const slot = ((offset / groupBytes) * window.chunks.length + c) * 256
          const entries = [
            { binding: 0, resource: { buffer: summing.uniform, offset: slot, size: Math.ceil((4 * PLANES_LAYOUT.length) / 16) * 16 } },
            { binding: 1, resource: { buffer: window.chunks[0] } },
            { binding: 2, resource: { buffer: chunk } },
            { binding: 3, resource: { buffer: window.chunks[c + 1] ?? chunk } },
            { binding: 4, resource: { buffer: summing.totals } },
            { binding: 5, resource: { buffer: summing.sums } },
          ]
          return device.createBindGroup({ layout: planesLayout(device), entries })
        })
        for (const [kernel, invocations] of [
          [FIRST_SUMS_KERNEL, k * TOP_PARTS * FIRST_LISTS * summing.bins],
          [FIRST_MODES_KERNEL, k * TOP_PARTS * MODE_CELLS],
        ] as const) {
          pass.setPipeline(pipelineOf(device, kernel))
          const groupsOf = Math.ceil(invocations / WG)
          for (const group of bound) {
            pass.setBindGroup(1, group)
            transfers.dispatch(pass, Math.min(groupsOf, 65535), Math.ceil(groupsOf / 65535))
          }
        }
      }
    }
    pass.end()
    return groups
  }

  /** first_sums' uniform slots ([group][chunk]), the window's totals and the sums' buffer, written for `groups`. */
  private summing(
    window: WindowOnDevice,
    n: number,
    groups: LabelledGroup[],
  ): { uniform: GPUBuffer; totals: GPUBuffer; sums: GPUBuffer; bins: number } {
    const { transfers } = this.gpu
    // the window's planes are every field's of this labelling, from field 0 (a recorder's window)
    if (window.planes !== windowPlanes(window.frames))
      throw new CrystalError(
        'internal',
        `a window of ${window.frames} frames has ${windowPlanes(window.frames)} planes, not ${window.planes}`,
      )
    const bins = (window.planes - 2) / 2
    const fields = groups.reduce((all, g) => all + g.fields, 0)
    const chunks = window.chunks.length
    const values = new ArrayBuffer(groups.length * chunks * 256)
    for (const [g, { first }] of groups.entries())
      for (let c = 0; c < chunks; c++) {
        const at = {
          size: fields * n * n,
          first: c * window.perChunk,
          held: Math.min(window.perChunk, window.planes - c * window.perChunk),
          bins,
          inverse_frames: 1 / window.frames,
          first_field: first,
        }
        packStruct(PLANES_LAYOUT, at, values, (g * chunks + c) * 256)
      }
    this.planesUniform = transfers.room(this.planesUniform, values.byteLength, UNIFORM)
    transfers.write(this.planesUniform, 0, values)
    const totals = windowTotals(window.frames).float32
    this.totals = transfers.room(this.totals, totals.byteLength, STORAGE)
    transfers.write(this.totals, 0, totals)
    this.sums = transfers.room(this.sums, firstSumsBytes(fields, window.frames), STORAGE)
    return { uniform: this.planesUniform, totals: this.totals, sums: this.sums, bins }
  }

  destroy(): void {
    const { transfers } = this.gpu
    for (const held of [this.uniform, this.planesUniform, this.totals, this.sums]) if (held) transfers.destroy(held)
    if (this.out) transfers.keep(this.out)
    this.uniform = this.out = this.planesUniform = this.totals = this.sums = undefined
  }
}

/**
 * A field's components as detection takes them where the device listed them (PlaneSource.listed):
 * the threshold, then each component's smallest cell, cells and mass, in rankedComponents' order;
 * undefined where the host labels the map itself. Its twin: listedComponents (engine/detect/detect.ts).
 */
export type ListedComponents = Float64Array

/**
 * Field f's list from a group's lists and peaks as they came back (`words`, from the group's offset:
 * `fields` lists, then their peaks); undefined where the host takes the map (listedUnit).
 */
export function listOf(words: Uint32Array, fields: number, f: number): ListedComponents | undefined {
  const at = f * LIST_WORDS
  const count = words[at]
  const peakBits = words[fields * LIST_WORDS + f]
  const unit = listedUnit(words, fields, f)
  if (unit === undefined) return undefined
  // rankedComponents' order: the most mass, then the most cells, then the smallest cell
  const listed = Array.from({ length: count }, (_, s) => {
    const entry = at + 1 + 4 * s
    return [words[entry], words[entry + 1], (words[entry + 3] * 2 ** 32 + words[entry + 2]) * unit]
  }).sort((a, b) => b[2] - a[2] || b[1] - a[1] || a[0] - b[0])
  const peak = new Float32Array(new Uint32Array([peakBits]).buffer)[0]
  return Float64Array.from([thresholdOf(peak), ...listed.flat()])
}

/**
 * Field f's masses' unit (2^(e - 25), e its peak's binade: massUnit) where the device lists its map;
 * undefined where the host takes it: a map with a NaN or an infinity (NO_PEAK), one whose threshold or
 * cells could be subnormal (a peak under 2^-102: an adapter may flush them to zero), and one of more
 * than LISTED components.
 */
function listedUnit(words: Uint32Array, fields: number, f: number): number | undefined {
  const peakBits = words[fields * LIST_WORDS + f]
  const binade = (peakBits >>> 23) & 0xff
  if (words[f * LIST_WORDS] > LISTED || peakBits === 0xffffffff || binade < LEAST_LISTED_BINADE) return undefined
  return massUnit(peakBits)
}

/**
 * Field f's total and listed components' shapes (their twin: listedShapes), where listOf gives its list:
 * from its group's lists and peaks (`lists`) and shapes (`shapes`) as they came back; with `later`,
 * where a later window's sums were summed too, those.
 */
export function shapesOf(lists: Uint32Array, shapes: Uint32Array, fields: number, f: number, later = false): FieldShapes | undefined {
  const listed = listOf(lists, fields, f)
  if (!listed) return undefined
  const at = f * LIST_WORDS
  // the slots are in the order the roots came on the device
  const slots = new Map(Array.from({ length: lists[at] }, (_, slot) => [lists[at + 1 + 4 * slot], slot]))
  const field = shapes.subarray(f * SHAPES_WORDS)
  const words = listedRoots(listed).map((root) => {
    const slot = slots.get(root) as number
    return [root, lists[at + 2 + 4 * slot], field.subarray(3 + slot * SHAPE_WORDS)] as const
  })
  const shaped = { units: wide(field, 0), parts: new Map(words.map(([root, cells, w]) => [root, shapeOfSlot(w, cells)])) }
  if (!later) return shaped
  return { ...shaped, later: { unit: unitOfPeak(field[2]), parts: new Map(words.map(([root, , w]) => [root, laterOfSlot(w)])) } }
}

/** Two words (low first) as one float64: one rounding past 2^53, as fieldTotal's (and so the later sums'). */
const wide = (w: Uint32Array, k: number) => w[k + 1] * 2 ** 32 + w[k]
/** Three words as one float64: the top two exact (under 2^85), one rounding, as persistenceSums'. */
const wide3 = (w: Uint32Array, k: number) => w[k + 2] * 2 ** 64 + w[k + 1] * 2 ** 32 + w[k]

/** A slot's shape (its words `w`) of a component of `cells` cells. */
const shapeOfSlot = (w: Uint32Array, cells: number): ShapeSums => ({
  cells,
  sx: wide(w, 0),
  sy: wide(w, 2),
  sxx: wide(w, 4),
  syy: wide(w, 6),
  sxy: wide(w, 8),
  fx: w[12],
  fy: w[13],
  radii: wide(w, 10),
  reached: w[16],
  inner: w[17],
  edges: [w[29], w[30], w[31], w[32]],
})

/** A slot's later sums. */
const laterOfSlot = (w: Uint32Array): LaterSums => ({ units: wide(w, 18), ab: wide3(w, 20), aa: wide3(w, 23), bb: wide3(w, 26) })

/**
 * Field f's first TOP_PARTS components by rank as the device copied them, where listOf gives its list:
 * from its group's lists and peaks (`lists`) and first parts (`top`) as they came back. Their twin:
 * listedTop.
 */
export function topOf(lists: Uint32Array, top: Uint32Array, fields: number, f: number, later = false): FieldTop | undefined {
  const unit = listedUnit(lists, fields, f)
  if (unit === undefined) return undefined
  const field = top.subarray(f * TOP_WORDS)
  const parts = Array.from({ length: Math.min(lists[f * LIST_WORDS], TOP_PARTS) }, (_, r): TopPart => {
    const w = field.subarray(3 + r * (4 + SHAPE_WORDS))
    const slot = w.subarray(4)
    return { root: w[0], cells: w[1], mass: wide(w, 2) * unit, shape: shapeOfSlot(slot, w[1]), ...(later && { later: laterOfSlot(slot) }) }
  })
  const total = wide(field, 0) * unitOfPeak(lists[fields * LIST_WORDS + f])
  if (!later) return { total, parts }
  return { total, laterUnit: unitOfPeak(field[2]), parts, candidates: candidatesOfTable(field.subarray(CANDIDATES_AT)) }
}

/** A field's candidates from the table `rank` wrote (`w`: its head, then CANDIDATE_WORDS words a candidate). */
function candidatesOfTable(w: Uint32Array): Candidates {
  const parts = Array.from({ length: w[0] }, (_, k) => {
    const c = w.subarray(CANDIDATE_HEAD + k * CANDIDATE_WORDS)
    return {
      root: c[0],
      sums: { cells: c[1], sx: wide(c, 2), sy: wide(c, 4), sxx: wide(c, 6), syy: wide(c, 8), sxy: wide(c, 10), radii: wide(c, 12) },
    }
  })
  return { parts, complete: w[1] === 1 }
}

/**
 * Where field f's first parts' reads fall as the device made them (their twin: partPlaces), from its
 * group's places (`words`) as they came back: `parts` of them (topOf's).
 */
export function placesOf(words: Uint32Array, f: number, parts: number): PartPlaces[] {
  const signed = new Int32Array(words.buffer, words.byteOffset, words.length)
  return Array.from({ length: parts }, (_, r) => {
    const at = (f * TOP_PARTS + r) * PLACE_WORDS
    const w = signed.subarray(at, at + PLACE_WORDS)
    return {
      box: [w[0], w[1], w[2], w[3]],
      hc: words[at + 5] * 2 ** 32 + words[at + 4],
      centre: [w[6], w[7]],
      offsets: Array.from({ length: MODAL_BLOCKS }, (_, b) => Array.from(w.subarray(9 + 9 * b, 9 + 9 * b + w[8 + 9 * b]))),
      circles: Array.from(w.subarray(44, 108)),
    }
  })
}

/**
 * Field f's first parts' lists from its group's lists and regions (`words`, `fields` parts' lists then
 * their regions) as they came back: `parts` of them.
 */
export function partListsOf(words: Uint32Array, fields: number, f: number, parts: number): PartLists[] {
  const listAt = (at: number) => Array.from(words.subarray(at + 1, at + 1 + words[at]))
  return Array.from({ length: parts }, (_, r) => {
    const at = (f * TOP_PARTS + r) * LIST_PART_WORDS
    const region = fields * TOP_PARTS * LIST_PART_WORDS + (f * TOP_PARTS + r) * REGION_WORDS
    const kind = REGION_KINDS[words[region]]
    return {
      sample: listAt(at),
      reach: listAt(at + 1 + MAX_SAMPLED_CELLS),
      regions: kind === 'halved' ? [listAt(region + 1), listAt(region + 2 + MAX_SAMPLED_CELLS)] : kind,
    }
  })
}

/**
 * Labels `fields` stability maps of `n` x `n` cells (`maps`, [field][cell]) and reads back each one's
 * list (ListedComponents), some 2 KB a field, in one submit and one read; with `labels`, each cell's
 * label too (labels(structureMask(map), n)); with `shapes`, its total and each listed component's
 * ShapeSums, and with `later` (a later window's sums for each map, [field][cell], and the samples
 * they took) those sums over each (shapesOf), and its first parts by rank and candidates (topOf). What the recorder does where the maps lie, for
 * a test and a benchmark.
 */
export async function labelMaps(
  gpu: Pick<GpuContext, 'device' | 'transfers' | 'bindingBytes' | 'failure' | 'check'>,
  maps: Float32Array,
  n: number,
  {
    labels = false,
    shapes = false,
    later,
    places = false,
    window,
  }: {
    labels?: boolean
    shapes?: boolean
    later?: Later
    places?: boolean
    /** The maps' window: its planes ([plane][field][cell]), frames, and planes a buffer (all, unless given). */
    window?: { planes: Float32Array; frames: number; perChunk?: number }
  } = {},
): Promise<
  {
    listed: ListedComponents | undefined
    labels?: Int32Array
    shapes?: FieldShapes
    top?: FieldTop
    places?: PartPlaces[]
    lists?: PartLists[]
    /** Per first part, its lists' power sums and its cells at its mode (firstSumsOf). */
    sums?: TopReads[]
  }[]
> {
  const cells = n * n
  if (!cells || maps.length % cells)
    throw new CrystalError(
      'bad_argument',
      `labelMaps takes whole maps of ${n} x ${n} cells: ${maps.length} floats is not a whole number of them`,
    )
  const fields = maps.length / cells
  const { device, transfers } = gpu
  const compiled = compiling(device, GpuLabeller.kernels)
  if (compiled !== undefined) await compiled
  if (later && later.sums.length !== maps.length)
    throw new CrystalError(
      'bad_argument',
      `labelMaps takes a later window's sums for each map: ${later.sums.length} floats for ${maps.length}`,
    )
  const input = device.createBuffer({ size: maps.byteLength, usage: STORAGE })
  const laterInput = later && device.createBuffer({ size: later.sums.byteLength, usage: STORAGE })
  const labeller = new GpuLabeller(gpu)
  const planeCount = window && window.planes.length / (fields * cells)
  const perChunk = window?.perChunk ?? planeCount ?? 1
  const chunks = Array.from({ length: planeCount ? Math.ceil(planeCount / perChunk) : 0 }, (_, c) => {
    const chunk = window!.planes.subarray(c * perChunk * fields * cells, (c + 1) * perChunk * fields * cells)
    const buffer = device.createBuffer({ size: chunk.byteLength, usage: STORAGE })
    transfers.write(buffer, 0, chunk)
    return buffer
  })
  try {
    transfers.write(input, 0, maps)
    if (later && laterInput) transfers.write(laterInput, 0, later.sums)
    const encoder = device.createCommandEncoder()
    const groups = labeller.encode(encoder, { buffer: input, base: 0, stride: cells, scale: 1 }, n, fields, {
      shapes,
      later: laterInput && later && { buffer: laterInput, base: 0, stride: cells, taken: later.taken },
      places,
      ...(window && planeCount && { window: { chunks, perChunk, planes: planeCount, frames: window.frames } }),
    })
    transfers.submit(encoder)
    const out = labeller.out as GPUBuffer
    const bytes = (g: LabelledGroup) => g.fields * (LIST_AND_PEAK_WORDS + (labels ? cells : 0)) * 4
    const back = await transfers.readRanges(
      groups
        .flatMap((g) => [
          { src: out, offset: g.offset, bytes: bytes(g) },
          ...(g.shapes === undefined
            ? []
            : [{ src: out, offset: g.shapes, bytes: g.fields * (SHAPES_WORDS + TOP_WORDS + (places ? PLACING_WORDS : 0)) * 4 }]),
        ])
        .concat(window && labeller.sums ? [{ src: labeller.sums, offset: 0, bytes: firstSumsBytes(fields, window.frames) }] : []),
      () => gpu.failure(),
    )
    gpu.check()
    const sums = window && planeCount ? new Float32Array(back[back.length - 1]) : undefined
    const reads = shapes ? 2 : 1
    // a field's shapes and first parts, and where asked, where those parts' reads fall (for the fields the device lists)
    const shapedOf = (words: Uint32Array, shaped: Uint32Array, fields: number, f: number) => {
      const top = topOf(words, shaped.subarray(fields * SHAPES_WORDS), fields, f, later !== undefined)
      return {
        shapes: shapesOf(words, shaped, fields, f, later !== undefined),
        top,
        ...(places &&
          top && {
            places: placesOf(shaped.subarray(fields * (SHAPES_WORDS + TOP_WORDS)), f, top.parts.length),
            lists: partListsOf(shaped.subarray(fields * (SHAPES_WORDS + TOP_WORDS + TOP_PARTS * PLACE_WORDS)), fields, f, top.parts.length),
          }),
      }
    }
    return groups.flatMap((g, k) => {
      const words = new Uint32Array(back[reads * k])
      const shaped = shapes ? new Uint32Array(back[reads * k + 1]) : undefined
      return Array.from({ length: g.fields }, (_, f) => {
        const field = {
          listed: listOf(words, g.fields, f),
          ...(labels && { labels: new Int32Array(words.buffer, (g.fields * LIST_AND_PEAK_WORDS + f * cells) * 4, cells).slice() }),
          ...(shaped && shapedOf(words, shaped, g.fields, f)),
        }
        const parts = field.top?.parts.length
        return { ...field, ...(sums && parts && { sums: firstSumsOf(sums, fields, g.first + f, parts, window!.frames) }) }
      })
    })
  } finally {
    for (const made of [input, ...chunks]) transfers.destroy(made)
    if (laterInput) transfers.destroy(laterInput)
    labeller.destroy()
  }
}

/** The floats of a first part's power sums over a window of `frames` frames: FIRST_LISTS lists' bins. */
const sumFloats = (frames: number) => FIRST_LISTS * ((windowPlanes(frames) - 2) / 2)

/** The bytes of `fields` fields' first parts' power sums and cells at their modes over a window of `frames` frames. */
export const firstSumsBytes = (fields: number, frames: number) => fields * TOP_PARTS * (sumFloats(frames) + MODE_FLOATS) * 4

/**
 * Field f's first parts' power sums and cells at their modes as the device made them (`sums`, every
 * field's, of `fields`, as they came back; views of them): per part, FIRST_LISTS lists' bins (its sample, its mode's
 * cells, its halves, its modal map's blocks), and its mode's bin and its cells' planes there (topModes').
 */
export function firstSumsOf(sums: Float32Array, fields: number, f: number, parts: number, frames: number): TopReads[] {
  const floats = sumFloats(frames)
  const modesAt = fields * TOP_PARTS * floats
  return Array.from({ length: parts }, (_, r) => {
    const part = f * TOP_PARTS + r
    return {
      sums: sums.subarray(part * floats, (part + 1) * floats),
      modes: sums.subarray(modesAt + part * MODE_FLOATS, modesAt + (part + 1) * MODE_FLOATS),
    }
  })
}
