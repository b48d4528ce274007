// The parts a field's perturbation may have to act on, from its listed parts' sums alone (docs/detection.md
// item 6, "every candidate perturbed"): what the GPU path perturbs as soon as the window's read is back,
// before detection has named a cell, so that the recovery steps run while it does. The device makes the
// table where it ranks the parts (shaders/components.wgsl `rank`); this is its twin, bit for bit.
import type { Candidate, Candidates, TopPart } from './sums.js'

/** The candidates a field's table holds: at most 3 a field were counted over 1,600 windows of four materials (docs/detection.md item 6). */
export const CANDIDATES = 4
/** A candidate's words in the table: its root, its cells, and two words each of its sums of x, y, x^2, y^2, x y and the radii. */
export const CANDIDATE_WORDS = 14
/** The table's head: how many candidates, and 1 where they are complete. */
export const CANDIDATE_HEAD = 2

/** The rules' bounds (CLASS_RULES' persists, contrast, field_wide and compact) as ratios of integers: 3/5, 3/2, 1/5, 1/100. */
export const RULES_AS_RATIOS = { persists: [3n, 5n], contrast: [3n, 2n], fieldWide: 5, compact: 100 } as const
/** The bounds are moved by 1 / MARGIN either way: the host's float64 rounding of `holds` is some 2^-52 of the values. */
const MARGIN = 2n ** 20n
/** Past 2^53 a float64 rounds, and the host's answer is not the exact one. */
const EXACT = 2 ** 53

/**
 * A field's scales as the table reads them: its side, the later window's samples, the map's total in
 * its units (fieldTotal), and the units of that total, of a mass (2^(e - 25)) and of the later sums
 * (laterUnit; 0 where they have none).
 */
export interface FieldScale {
  n: number
  taken: number
  total: number
  totalUnit: number
  massUnit: number
  laterUnit: number
}

/**
 * How a part holds (`holds`: sustain >= 0.6 and contrast >= 1.5), decided exactly in integers against
 * each bound moved by 2^-20 either way: `maybe` by the bounds lowered (whatever the host's rounding,
 * where it holds there, this is true), `sure` by the bounds raised (where true, it holds there). A sum
 * past 2^53, which the host rounds, makes its rule maybe and not sure.
 */
function holdOf(p: TopPart, f: FieldScale): { maybe: boolean; sure: boolean } {
  const lu = p.later?.units ?? 0
  const m = p.mass / f.massUnit
  if (!f.laterUnit || !lu || !m) return { maybe: false, sure: false }
  const [persistsUp, persistsDown] = RULES_AS_RATIOS.persists
  const [contrastUp, contrastDown] = RULES_AS_RATIOS.contrast
  // sustain: lu laterUnit / taken / (m massUnit) >= 3/5 (1 + side / MARGIN)
  const k = BigInt(Math.round(Math.log2(f.laterUnit / f.massUnit)))
  const sustains = (side: bigint) => {
    const left = persistsDown * MARGIN * BigInt(lu) * (k > 0n ? 2n ** k : 1n)
    const right = persistsUp * (MARGIN + side) * BigInt(Math.max(f.taken, 1)) * BigInt(m) * (k < 0n ? 2n ** -k : 1n)
    return left >= right
  }
  // contrast: (s / cells) / ((total - s) / d) >= 3/2 (1 + side / MARGIN), s the mass in the total's units; none where nothing lies outside
  const s = BigInt(p.mass / f.totalUnit)
  const total = BigInt(f.total)
  const d = BigInt(Math.max(1, f.n * f.n - p.cells))
  const contrasts = (side: bigint) =>
    total > s && contrastDown * MARGIN * s * d >= contrastUp * (MARGIN + side) * BigInt(p.cells) * (total - s)
  const roundedSustain = lu >= EXACT || m >= EXACT
  const roundedContrast = f.total >= EXACT
  return {
    maybe: (roundedSustain || sustains(-1n)) && (roundedContrast || contrasts(-1n)),
    sure: !roundedSustain && !roundedContrast && sustains(1n) && contrasts(1n),
  }
}

/**
 * A field's candidates (the twin of what shaders/components.wgsl `rank` writes), from every part it
 * lists, in rank order (`parts`, each with its later sums): every part that may hold (holdOf), up to the
 * first that surely holds and that its shape alone classes, a field-wide or compact one (classify
 * classes such a part whatever its spectra say). Parts that hold but are not so decided are classed or
 * not by their spectra, which the window's read does not bring, so each is a candidate. `complete`
 * where the list ends so or runs out: detection's first structure, where it finds one, is then among
 * them; not where CANDIDATES ran out first. The ring shape decides too, but took no candidate off over
 * 1,600 windows of four materials (docs/detection.md item 6), so it is not asked.
 */
export function candidateTable(parts: readonly TopPart[], f: FieldScale): Candidates {
  const taken: Candidate[] = []
  const cells = f.n * f.n
  for (const p of parts) {
    const { maybe, sure } = holdOf(p, f)
    if (!maybe) continue
    if (taken.length === CANDIDATES) return { parts: taken, complete: false }
    const { sx, sy, sxx, syy, sxy, radii } = p.shape
    taken.push({ root: p.root, sums: { cells: p.cells, sx, sy, sxx, syy, sxy, radii } })
    if (sure && (RULES_AS_RATIOS.fieldWide * p.cells >= cells || RULES_AS_RATIOS.compact * p.cells < cells)) break
  }
  return { parts: taken, complete: true }
}

/** Where a window came with no table (no later window was summed, or the host labelled the map): none, not complete. */
export const NO_CANDIDATES: Candidates = { parts: [], complete: false }
