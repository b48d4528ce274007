// The parts a field's perturbation may have to act on, from its first parts' sums alone (docs/detection.md
// item 6, "every candidate perturbed"): what the GPU path perturbs as soon as the window's read is back,
// before detection has named a cell, so that the recovery steps run while it does.
import { CLASS_RULES, holds, type PlanSums, stabilityRatio, sustainFrom, TOP_PARTS } from './detect.js'
import type { FieldTop } from './sums.js'

/** A part a field's perturbation may act on: its smallest cell, its share of the field and what its erase plan reads. */
export interface Candidate {
  root: number
  area: number
  sums: PlanSums
}

/**
 * A field's candidates, in rank order. `complete`: detection's first structure, where it finds one, is
 * one of them; else it may lie past the first parts the device summed (TOP_PARTS), or the host labelled
 * the map (no first parts), and is perturbed once found.
 */
export interface Candidates {
  parts: Candidate[]
  complete: boolean
}

/**
 * The parts of a field (its first parts' sums `top`, of side n, the later window `taken` samples) that
 * detection's first structure could be: every part that holds (`holds`, from the same sums detection
 * takes it from, so the same answer), in rank order, up to the first that its shape alone classes, a
 * field-wide or compact one (classify classes such a part whatever its spectra say). Parts that hold
 * but are not so decided are classed or not by their spectra, which the window's read does not bring,
 * so each is a candidate. The ring shape decides too, but took no candidate off over 1,600 windows of
 * four materials (docs/detection.md item 6), so it is not asked.
 */
export function candidatesOf(top: FieldTop | undefined, n: number, taken: number): Candidates {
  const parts: Candidate[] = []
  if (top?.laterUnit === undefined) return { parts, complete: false }
  const cells = n * n
  for (const p of top.parts) {
    if (!p.later) return { parts, complete: false }
    const sustain = sustainFrom(p.later.units, top.laterUnit, taken, p.mass)
    if (!holds({ sustain, stability_ratio: stabilityRatio(p.mass, p.cells, top.total, cells) })) continue
    const area = p.cells / cells
    const { sx, sy, sxx, syy, sxy, radii } = p.shape
    parts.push({ root: p.root, area, sums: { cells: p.cells, sx, sy, sxx, syy, sxy, radii } })
    if (area >= CLASS_RULES.field_wide || area < CLASS_RULES.compact) return { parts, complete: true }
  }
  // past the first parts the device summed lie more, which may hold
  return { parts, complete: top.parts.length < TOP_PARTS }
}
