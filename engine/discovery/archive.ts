// The MAP-Elites archive of one material (docs/discovery.md): a grid over descriptors measured from
// the dynamics (class, size, elongation, annularity, standing), each cell keeping its fittest
// structure, its elite.
import type { RegisteredArchiveReport } from '../contracts/api.js'
import { CLASS_TOKENS, type ClassToken, type Primitive } from '../contracts/registry.js'

/**
 * The grid's axes after the class, each cut at its edges (a value at an edge goes above it). The bins
 * are finer where random genomes seldom land (small, elongated, hollow structures), so that the
 * archive has room beyond what random draws fill (measured in docs/discovery.md).
 */
export const AXES = {
  /** log10 of the structure's share of the field (8 bins: under 0.4% up to over 56%). */
  size: [-2.4, -2, -1.6, -1.2, -0.8, -0.5, -0.25],
  /** sqrt of the ratio of the principal second moments (6 bins: round to over 3:1). */
  elongation: [1.1, 1.25, 1.5, 2, 3],
  /** share of the inner disc not in the structure (4 bins: solid to ring). */
  annularity: [0.1, 0.25, 0.4],
  /** 0 = rotating, 1 = standing (3 bins). */
  standing: [1 / 3, 2 / 3],
} as const satisfies Record<string, readonly number[]>

export type Axis = keyof typeof AXES
export const AXIS_NAMES = Object.keys(AXES) as Axis[]
export const binsOf = (axis: Axis) => AXES[axis].length + 1
export const ARCHIVE_CELLS = CLASS_TOKENS.length * AXIS_NAMES.reduce((n, a) => n * binsOf(a), 1)

/** What places a structure in the grid: its class, area (share of the field), elongation, annularity and standing. */
export interface Descriptors {
  class: ClassToken
  area: number
  elongation: number
  annularity: number
  standing: number
}

/** Where a structure sits: its class and the descriptors among its features (a primitive's metrics hold them too). */
export function descriptorsOf(s: { class: ClassToken; features: Omit<Descriptors, 'class'> }): Descriptors {
  const { area, elongation, annularity, standing } = s.features
  return { class: s.class, area, elongation, annularity, standing }
}

export type ArchiveCell = { class: ClassToken } & Record<Axis, number>

const binOf = (v: number, edges: readonly number[]) => edges.filter((e) => v >= e).length

export function cellOf(d: Descriptors): ArchiveCell {
  return {
    class: d.class,
    size: binOf(Math.log10(Math.max(d.area, 1e-6)), AXES.size),
    elongation: binOf(d.elongation, AXES.elongation),
    annularity: binOf(d.annularity, AXES.annularity),
    standing: binOf(d.standing, AXES.standing),
  }
}

export function cellKey(c: ArchiveCell): string {
  return [c.class, ...AXIS_NAMES.map((a) => c[a])].join('/')
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

  /** The elite of a cell, if it holds one. */
  elite(cell: ArchiveCell): Elite<T> | undefined {
    return this.cells.get(cellKey(cell))
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

/** What the registered archive reads of a primitive: its class and material, and its fitness and descriptors among its metrics. */
export type Placeable = Pick<Primitive, 'id' | 'class' | 'material' | 'metrics'>

const PLACED_BY = ['fitness', 'area', 'elongation', 'annularity', 'standing'] as const

/**
 * The registered archive of a material: its registered primitives placed in the grid, the fittest per
 * cell (over every run ever made on it), with the QD-score and coverage of that grid. One function for
 * the archive map and for what evolve reports after registering, so the two agree. Primitives are read
 * in id order, so the elites (and the sum) do not depend on the order they were listed in. Primitives
 * registered before the archive existed lack descriptors and are counted as unplaced.
 */
export function registeredArchive<T extends Placeable>(
  primitives: readonly T[],
  material: string,
): { archive: Archive<T>; report: RegisteredArchiveReport } {
  const archive = new Archive<T>()
  let placed = 0
  let unplaced = 0
  const own = primitives.filter((p) => p.material === material).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  for (const p of own) {
    if (!PLACED_BY.every((k) => typeof p.metrics[k] === 'number')) {
      unplaced++
      continue
    }
    placed++
    const { area, elongation, annularity, standing, fitness } = p.metrics
    archive.offer({ class: p.class, area, elongation, annularity, standing }, fitness, p)
  }
  return {
    archive,
    report: { material, qd_score: archive.qd_score, coverage: archive.coverage, cells: archive.size, placed, unplaced },
  }
}

/**
 * The two archives after a run, in the words `crystal evolve`, `crystal explore` and the Lab all use:
 * the search's own (its elites, duplicates of held primitives included) and the material's registered one.
 */
export function archivesInWords(
  search: { qd_score: number; coverage: number; elites: number },
  registered: RegisteredArchiveReport | null,
): string {
  const own = `search archive QD-score ${search.qd_score.toFixed(2)}, coverage ${(100 * search.coverage).toFixed(1)}% (${search.elites} cells)`
  if (!registered) return own
  const { material, qd_score, cells, coverage } = registered
  return `${own}; registered archive of ${material} now QD-score ${qd_score.toFixed(2)} over ${cells} cell${cells === 1 ? '' : 's'} (${(100 * coverage).toFixed(1)}%)`
}
