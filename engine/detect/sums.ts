// The exact sums over a stability map's parts that the host and the device both make (docs/detection.md,
// item 2's exact forms): integers in float64, equal to the bit on any adapter. Made on the host by
// engine/detect/detect.ts (shapeSums, laterUnitsOf, persistenceSums, listedShapes, listedTop) and on
// the device by shaders/components.wgsl (read by engine/gpu/components.ts shapesOf and topOf).

/**
 * A part's shape as integers (docs/detection.md, item 2's exact forms): what measure() makes its shape
 * features of, and what the device sums at each listed component's slot (shaders/components.wgsl,
 * `moments` to `sectors`), bit for bit.
 */
export interface ShapeSums {
  cells: number
  /** Sums over the cells of x, y, x^2, y^2 and x y (x the column, y the row): integers under 2^53. */
  sx: number
  sy: number
  sxx: number
  syy: number
  sxy: number
  /** The centroid in fixed point (OFFSET_BITS fractional bits), rounded once: floor((2 X 2^F + c) / (2 c)). */
  fx: number
  fy: number
  /** The sum of the cells' distances from it, each floored in the same units: isqrt(dx^2 + dy^2). */
  radii: number
  /** Bit s set where a cell at least half the mean radius out (2 c r >= radii) lies in sector s (sectorOf). */
  reached: number
  /** The cells within half the mean radius (2 c r <= radii). */
  inner: number
  /** Its least and greatest column, then its least and greatest row (where its signature's window reaches). */
  edges: [number, number, number, number]
}

/** What a perturbation's erase plan reads of a part: its cells' count and integer sums (ShapeSums). */
export type PlanSums = Pick<ShapeSums, 'cells' | 'sx' | 'sy' | 'sxx' | 'syy' | 'sxy' | 'radii'>

/** A part a field's perturbation may act on (engine/detect/candidates.ts): its smallest cell, and what its erase plan reads. */
export interface Candidate {
  root: number
  sums: PlanSums
}

/**
 * A field's candidates, in rank order. `complete`: detection's first structure, where it finds one, is
 * one of them; else it may lie past them, and is perturbed once found.
 */
export interface Candidates {
  parts: Candidate[]
  complete: boolean
}

/** Persistence's cosine's sums over a part (persistenceSums). */
export interface PersistenceSums {
  ab: number
  aa: number
  bb: number
}

/**
 * A map's total's units (fieldTotal) and its listed components' ShapeSums by their smallest cells, in
 * the list's order; where a later window's sums were taken too, their laterUnit and each component's
 * laterUnitsOf, by the same cells.
 */
export interface FieldShapes {
  units: number
  parts: Map<number, ShapeSums>
  later?: { unit: number; parts: Map<number, LaterSums> }
}

/** A part's sums over a later window: its laterUnitsOf, and its persistenceSums (a in the map's units 2^(e - 25)). */
export interface LaterSums extends PersistenceSums {
  units: number
}

/**
 * What the device read of a first part where the window's planes lie (engine/gpu/components.ts
 * firstSumsOf; twins topSums and topModes): its FIRST_LISTS lists' power sums, a bin each ([list][bin]:
 * its sample, its mode's cells, its halves, its modal map's blocks), and its mode's bin followed by
 * planes 0, 2 bin and 2 bin + 1 of its sample's slots and its winding circles' cells.
 */
export interface TopReads {
  sums: Float32Array
  modes: Float32Array
}

/**
 * One of a field's first parts by rank: its smallest cell, cells, mass, shape and, where taken, later
 * sums and what detection reads of it over its window (`reads`).
 */
export interface TopPart {
  root: number
  cells: number
  mass: number
  shape: ShapeSums
  later?: LaterSums
  reads?: TopReads
}

/**
 * A field's first parts by rank as the device copied them, with its map's total (fieldTotal's) and,
 * where a later window's sums were taken, their unit (laterUnit's) and the field's candidates over
 * every part it lists (engine/detect/candidates.ts).
 */
export interface FieldTop {
  total: number
  laterUnit?: number
  parts: TopPart[]
  candidates?: Candidates
}
