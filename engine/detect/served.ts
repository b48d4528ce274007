// What the device read of a field's first parts where the window's planes lie (TopReads: their lists'
// power sums and their cells at their mode, shaders/components.wgsl `first_sums` and `first_modes`),
// served to detection by the lists' contents, so that those lists are neither named (cellsRead) nor
// gathered (engine/gpu/record.ts). docs/detection.md, item 3.
import type { TopReads } from './sums.js'
import { MAX_SAMPLED_CELLS, sample } from './dynamics.js'
import type { ModalSamples } from './modal.js'
import { circleCells, type Placement } from './placement.js'
import { ListIndex, type PlaneSource, WindowSpectra } from './spectra.js'

/**
 * What the device read of a part (`own`); where its regions are its halves, their samples are its lists
 * 2 and 3 (`halves`); where they are it and the next part, and the device read that one too, the next
 * part's sample is its list 0 (`next`).
 */
export interface PartReads {
  own: TopReads
  halves: boolean
  next?: TopReads
}

/** A part as far as the device's lists of it go: its cells in index order, where they are placed, its regions and lists. */
export interface ServedPart {
  cells: readonly number[]
  place: Placement
  regions: () => [readonly number[], readonly number[]] | undefined
  /** reachSample of its cells over reachBox(place). */
  reach: () => readonly number[]
  /** modalSamples over its signature's window. */
  modal: () => ModalSamples
  reads?: PartReads
}

/** The floats of a part's mode read: its bin, then 3 a cell (TopReads.modes). */
const MODE_AT = (slot: number) => 1 + 3 * slot

/**
 * A window's spectra (`spec`) that answers the power sums and mode planes the device made of the parts
 * `serve` is given from those, and everything else from `spec`'s source.
 */
export class ServedSpectra {
  readonly spec: WindowSpectra
  private readonly lists = new ListIndex()
  private readonly sums: Float32Array[] = []
  /** Per list that is a part's mode's cells (by its number), that part's mode read and where each cell's planes lie in it. */
  private readonly modes = new Map<number, { floats: Float32Array; slots: Map<number, number> }>()
  private readonly served = new WeakSet<ServedPart>()

  constructor(base: WindowSpectra) {
    const source = base.source
    const own: PlaneSource = {
      plane: (p, cell) => source.plane(p, cell),
      ...(source.row && { row: (cell: number) => source.row!(cell) }),
      ...(source.stabilitySums && { stabilitySums: () => source.stabilitySums!() }),
      powers: (cells) => {
        const l = this.lists.get(cells)
        return l === undefined ? source.powers?.(cells) : this.sums[l]
      },
      modePlanes: (cell, mode, bin) => this.modePlanes(cell, mode, bin) ?? source.modePlanes?.(cell, mode, bin),
    }
    this.spec = new WindowSpectra(base.n, base.dt, base.frames, own)
  }

  /** The part's lists, where the device read them, answered from what it read (once a part). */
  serve(part: ServedPart): void {
    const { reads } = part
    if (!reads || this.served.has(part)) return
    this.served.add(part)
    const { bins } = this.spec
    const list = (from: TopReads, l: number) => from.sums.subarray(l * bins, (l + 1) * bins)
    const add = (cells: ArrayLike<number>, sums: Float32Array) => {
      const l = this.lists.add(cells)
      this.sums[l] ??= sums
      return l
    }
    const own = sample(part.cells)
    add(own, list(reads.own, 0))
    const reach = add(part.reach(), list(reads.own, 1))
    // its mode's cells: its sample's slots, then the winding circles' (topModes' order); a cell in two, the same planes
    const slots = new Map<number, number>()
    for (let s = 0; s < own.length; s++) slots.set(own[s], MODE_AT(s))
    for (const [c, tenths] of [10, 7].entries()) {
      const circle = circleCells(part.place, tenths)
      for (let j = 0; j < circle.length; j++) if (circle[j] >= 0) slots.set(circle[j], MODE_AT(MAX_SAMPLED_CELLS + c * circle.length + j))
    }
    this.modes.set(reach, { floats: reads.own.modes, slots })
    const regions = reads.halves || reads.next ? part.regions() : undefined
    if (regions && reads.halves) regions.forEach((half, h) => add(sample(half), list(reads.own, 2 + h)))
    if (regions && reads.next) add(sample(regions[1]), list(reads.next, 0))
    const { cells, ends } = part.modal()
    ends.forEach((end, b) => add(cells.subarray(b ? ends[b - 1] : 0, end), list(reads.own, 4 + b)))
  }

  private modePlanes(cell: number, mode: ArrayLike<number>, bin: number): Float32Array | undefined {
    const l = this.lists.get(mode)
    const read = l === undefined ? undefined : this.modes.get(l)
    const at = read?.slots.get(cell)
    // the device's bin is the host's rule over the same sums: another bin is another mode
    if (!read || at === undefined || read.floats[0] !== bin) return undefined
    return read.floats.subarray(at, at + 3)
  }
}
