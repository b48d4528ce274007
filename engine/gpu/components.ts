// Stability maps' components and their masses made where the maps live (shaders/components.wgsl):
// the first bricks of detection on the device (docs/detection.md, "What one read a generation would
// take", items 1 and 2). Not yet in evolve's path: `crystal bench discovery` times it against the
// host's labelling of the same maps, the figure that says what moving detection to the device buys.
// CPU twin: labels(structureMask(map), n) and rankedComponents (engine/detect/detect.ts); test:
// engine/gpu/components.test.ts.
import { wgslStruct, packStruct } from '../field/params.js'
import { MIN_AREA_CELLS } from '../detect/detect.js'
import { CrystalError } from '../errors.js'
import { compiling, type GpuContext, type Kernel, kernelModule, perDevice, pipelineOf } from './context.js'
import { SHADERS } from './shaders.gen.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
const WG = 256
/** The uniform: cells a field, its side, fields, floats between fields in `maps`, the first field's float, what a map's value is multiplied by. */
const COMPONENTS_LAYOUT = [
  ['cells', 'u32'],
  ['n', 'u32'],
  ['fields', 'u32'],
  ['stride', 'u32'],
  ['base', 'u32'],
  ['scale', 'f32'],
] as const

const ENTRIES = ['peak', 'mask', 'link', 'flatten', 'tally', 'list'] as const
type Entry = (typeof ENTRIES)[number]
const componentsModule = (device: GPUDevice) =>
  perDevice(device, 'components:module', () =>
    kernelModule(
      device,
      `${wgslStruct('Components', COMPONENTS_LAYOUT)}const MIN_AREA: u32 = ${MIN_AREA_CELLS}u;\nconst LISTED: u32 = ${LISTED}u;\n`,
      SHADERS.components,
    ),
  )
const COMPUTE_STAGE = 0x4
/** One layout for every entry point (an 'auto' one leaves out what an entry does not use), so one bind group serves them all. */
const componentsLayout = (device: GPUDevice) =>
  perDevice(device, 'components:layout', () =>
    device.createBindGroupLayout({
      entries: [
        { binding: 0, visibility: COMPUTE_STAGE, buffer: { type: 'uniform' } },
        { binding: 1, visibility: COMPUTE_STAGE, buffer: { type: 'read-only-storage' } },
        { binding: 2, visibility: COMPUTE_STAGE, buffer: { type: 'storage' } },
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

/** A component as the device lists it: its smallest cell, its cells and its stability mass (massOf's float64 sum, exactly). */
export interface ListedComponent {
  root: number
  cells: number
  mass: number
}

/** A field's map labelled on the device. */
export interface LabelledMap {
  /**
   * Its components of MIN_AREA_CELLS cells or more, the most mass first, then the smallest root: the
   * order partsOf (engine/detect/detect.ts) takes components and massOf in. Only LISTED of them where
   * it has more (`components` says how many).
   */
  found: ListedComponent[]
  /** How many components of MIN_AREA_CELLS or more the map has. */
  components: number
  /** labels(structureMask(map), n), where asked for. */
  labels?: Int32Array
}

/** Components a field's list holds: a field of europium_crystal has up to some 35 (docs/detection.md, item 3). */
export const LISTED = 128
const LIST_WORDS = 1 + 4 * LISTED

/**
 * Labels `fields` stability maps of `n` x `n` cells (`maps`, [field][cell]) on `gpu`'s device and
 * reads back each one's components, ranked, in some 2 KB a field; with `labels`, each cell's label too.
 * One submit and one read a group of fields that fits a storage binding (at N = 96, some 2,000 fields
 * where a binding holds 128 MiB). A map with an infinite cell is outside the contract (its masses are
 * not exact).
 */
export async function labelMaps(
  gpu: Pick<GpuContext, 'device' | 'transfers' | 'bindingBytes' | 'failure' | 'check'>,
  maps: Float32Array,
  n: number,
  { labels = false }: { labels?: boolean } = {},
): Promise<LabelledMap[]> {
  const cells = n * n
  if (!cells || maps.length % cells)
    throw new CrystalError(
      'bad_argument',
      `labelMaps takes whole maps of ${n} x ${n} cells: ${maps.length} floats is not a whole number of them`,
    )
  const fields = maps.length / cells
  const { device, transfers } = gpu
  const compiled = compiling(device, Object.values(COMPONENTS_KERNELS))
  if (compiled !== undefined) await compiled
  // out's words a field: its list, its peak, its labels and its cells' tallies (shaders/components.wgsl)
  const wordsA = LIST_WORDS + 1 + 4 * cells
  const group = Math.max(1, Math.min(fields, Math.floor(gpu.bindingBytes / 4 / wordsA), 65535))
  const input = device.createBuffer({ size: group * cells * 4, usage: STORAGE })
  const uniform = device.createBuffer({ size: 32, usage: UNIFORM })
  const out = device.createBuffer({ size: group * wordsA * 4, usage: STORAGE })
  const labelled: LabelledMap[] = []
  try {
    for (let first = 0; first < fields; first += group) {
      const k = Math.min(group, fields - first)
      const values = new ArrayBuffer(32)
      packStruct(COMPONENTS_LAYOUT, { cells, n, fields: k, stride: cells, base: 0, scale: 1 }, values)
      transfers.write(uniform, 0, values)
      transfers.write(input, 0, maps.subarray(first * cells, (first + k) * cells))
      const encoder = device.createCommandEncoder()
      const pass = encoder.beginComputePass()
      const entries = [
        { binding: 0, resource: { buffer: uniform } },
        { binding: 1, resource: { buffer: input, size: k * cells * 4 } },
        { binding: 2, resource: { buffer: out, size: k * wordsA * 4 } },
      ]
      pass.setBindGroup(0, device.createBindGroup({ layout: componentsLayout(device), entries }))
      const groups = Math.ceil(cells / WG)
      for (const entry of ENTRIES) {
        pass.setPipeline(pipelineOf(device, COMPONENTS_KERNELS[entry]))
        if (entry === 'peak') transfers.dispatch(pass, k)
        else transfers.dispatch(pass, Math.min(groups, 65535), Math.ceil(groups / 65535), k)
      }
      pass.end()
      // the lists and the peaks lead `out`, the labels after them
      const words = new Uint32Array(
        await transfers.read(out, 0, k * (LIST_WORDS + 1 + (labels ? cells : 0)) * 4, encoder, () => gpu.failure()),
      )
      gpu.check()
      for (let f = 0; f < k; f++) labelled.push(unpack(words, k, f, labels ? cells : 0))
    }
  } finally {
    for (const b of [input, uniform, out]) transfers.destroy(b)
  }
  return labelled
}

/** Field `f` of a group of `fields` from `out`'s leading words (its labels where `cells` of them were read). */
function unpack(words: Uint32Array, fields: number, f: number, cells: number): LabelledMap {
  // a mass is in units of 2^(e - 25), e the peak's binade (the least normal one's for a subnormal peak)
  const e = Math.max((words[fields * LIST_WORDS + f] >>> 23) & 0xff, 1) - 127
  const unit = 2 ** (e - 25)
  const at = f * LIST_WORDS
  const components = words[at]
  const found = Array.from({ length: Math.min(components, LISTED) }, (_, s) => {
    const entry = at + 1 + 4 * s
    return { root: words[entry], cells: words[entry + 1], mass: (words[entry + 3] * 2 ** 32 + words[entry + 2]) * unit }
  }).sort((a, b) => b.mass - a.mass || a.root - b.root)
  const listed: LabelledMap = { found, components }
  if (cells) listed.labels = new Int32Array(words.buffer, (fields * (LIST_WORDS + 1) + f * cells) * 4, cells).slice()
  return listed
}
