// The MAP-Elites archive of one material (docs/discovery.md): a grid over descriptors measured from
// the dynamics (class, size, standing), each cell keeping its fittest structure, its elite.
import { CLASS_TOKENS, type ClassToken } from '../contracts/registry.js'

/** Size bins: log10 of the structure's share of the field, cut at these edges (5 bins). */
export const SIZE_EDGES = [-2.4, -1.8, -1.2, -0.6] as const
/** Standing bins: standing (0 = rotating, 1 = standing) cut at these edges (4 bins). */
export const STANDING_EDGES = [0.25, 0.5, 0.75] as const
export const ARCHIVE_CELLS = CLASS_TOKENS.length * (SIZE_EDGES.length + 1) * (STANDING_EDGES.length + 1)

/** What places a structure in the grid: its class, area (share of the field) and standing. */
export interface Descriptors {
  class: ClassToken
  area: number
  standing: number
}

export interface ArchiveCell {
  class: ClassToken
  size_bin: number
  standing_bin: number
}

const binOf = (v: number, edges: readonly number[]) => edges.filter((e) => v >= e).length

export function cellOf(d: Descriptors): ArchiveCell {
  return { class: d.class, size_bin: binOf(Math.log10(Math.max(d.area, 1e-6)), SIZE_EDGES), standing_bin: binOf(d.standing, STANDING_EDGES) }
}

export function cellKey(c: ArchiveCell): string {
  return `${c.class}/${c.size_bin}/${c.standing_bin}`
}

export interface Elite<T> {
  cell: ArchiveCell
  fitness: number
  item: T
}

export class Archive<T> {
  private readonly cells = new Map<string, Elite<T>>()

  /** Keeps the item when its cell is empty or it is fitter than the cell's elite; says whether it was kept. */
  offer(d: Descriptors, fitness: number, item: T): boolean {
    const cell = cellOf(d)
    const key = cellKey(cell)
    const held = this.cells.get(key)
    if (held && held.fitness >= fitness) return false
    this.cells.set(key, { cell, fitness, item })
    return true
  }

  elites(): Elite<T>[] {
    return [...this.cells.values()]
  }

  /** Sum of the elites' fitness (the QD-score). */
  get qd_score(): number {
    let s = 0
    for (const e of this.cells.values()) s += e.fitness
    return s
  }

  /** Share of the grid's cells that hold an elite. */
  get coverage(): number {
    return this.cells.size / ARCHIVE_CELLS
  }

  get size(): number {
    return this.cells.size
  }
}
