// The MAP-Elites grid: where descriptors fall, and what a cell keeps.
import { describe, expect, test } from 'vitest'
import { CLASS_TOKENS } from '../contracts/registry.js'
import {
  Archive,
  ARCHIVE_CELLS,
  archivesInWords,
  AXES,
  AXIS_NAMES,
  binsOf,
  cellKey,
  cellOf,
  registeredArchive,
  type Descriptors,
  type Placeable,
} from './archive.js'

const blob: Descriptors = { class: 'attractor_field', area: 0.5, elongation: 1.05, annularity: 0, standing: 0.9 }

describe('the archive grid', () => {
  test('has a cell for every class and every bin of each axis', () => {
    expect(AXIS_NAMES).toEqual(['size', 'elongation', 'annularity', 'standing'])
    expect(ARCHIVE_CELLS).toBe(CLASS_TOKENS.length * 8 * 6 * 4 * 3)
    for (const a of AXIS_NAMES) expect([...AXES[a]]).toEqual([...AXES[a]].sort((x, y) => x - y))
  })

  test('places descriptors in their bins; a value on an edge goes above it', () => {
    expect(cellOf(blob)).toEqual({ class: 'attractor_field', size: 6, elongation: 0, annularity: 0, standing: 2 })
    expect(cellOf({ ...blob, area: 10 ** -2.4 }).size).toBe(1)
    expect(cellOf({ ...blob, area: 0 }).size).toBe(0)
    expect(cellOf({ ...blob, area: 1 }).size).toBe(binsOf('size') - 1)
    expect(cellOf({ ...blob, elongation: 3.5 }).elongation).toBe(binsOf('elongation') - 1)
    expect(cellOf({ ...blob, annularity: 0.25 }).annularity).toBe(2)
    expect(cellOf({ ...blob, standing: 0.1 }).standing).toBe(0)
    expect(cellKey(cellOf(blob))).toBe('attractor_field/6/0/0/2')
    expect(cellKey(cellOf({ ...blob, class: 'standing_echo' }))).not.toBe(cellKey(cellOf(blob)))
  })

  test('a cell keeps its fittest structure; QD-score sums the elites and coverage counts the cells', () => {
    const archive = new Archive<string>()
    expect(archive.offer(blob, 0.6, 'a')).toBe(true)
    expect(archive.offer({ ...blob, area: 0.45 }, 0.5, 'b')).toBe(false) // same cell, less fit
    expect(archive.offer({ ...blob, area: 0.45 }, 0.8, 'c')).toBe(true)
    expect(archive.offer({ ...blob, elongation: 2.2 }, 0.3, 'd')).toBe(true)
    expect(
      archive
        .elites()
        .map((e) => e.item)
        .sort(),
    ).toEqual(['c', 'd'])
    expect(archive.qd_score).toBeCloseTo(1.1, 12)
    expect(archive.coverage).toBe(2 / ARCHIVE_CELLS)
  })
})

describe('the registered archive of a material', () => {
  const held = (id: string, fitness: number, o: Partial<Placeable> & { area?: number } = {}): Placeable => ({
    id,
    class: 'attractor_field',
    material: 'europium_crystal',
    metrics: { fitness, area: o.area ?? 0.5, elongation: 1.05, annularity: 0, standing: 0.9 },
    ...o,
  })
  const primitives = [
    held('CRY-000003', 0.7), // same cell as 1, fitter
    held('CRY-000001', 0.4),
    held('CRY-000002', 0.3, { area: 0.01 }),
    held('CRY-000004', 0.9, { material: 'silicon' }),
    { ...held('CRY-000005', 0.8), metrics: { fitness: 0.8 } }, // registered before descriptors were kept
  ]

  test("keeps the fittest of the material's primitives per cell: QD-score, coverage, cells; other materials and undescribed ones left out", () => {
    const { archive, report } = registeredArchive(primitives, 'europium_crystal')
    expect(report).toEqual({
      material: 'europium_crystal',
      qd_score: 0.7 + 0.3,
      coverage: 2 / ARCHIVE_CELLS,
      cells: 2,
      placed: 3,
      unplaced: 1,
    })
    expect(archive.elite(cellOf({ ...blob, area: 0.5 }))?.item.id).toBe('CRY-000003')
    // whatever order the registry lists them in, the same elites and the same sum to the last bit
    expect(registeredArchive([...primitives].reverse(), 'europium_crystal').report).toEqual(report)
  })

  test('is told in words beside the search archive', () => {
    const { report } = registeredArchive(primitives, 'europium_crystal')
    expect(archivesInWords({ qd_score: 13.449, coverage: 0.0081, elites: 7 }, report)).toBe(
      'search archive QD-score 13.45, coverage 0.8% (7 cells); registered archive of europium_crystal now QD-score 1.00 over 2 cells (0.1%)',
    )
    expect(archivesInWords({ qd_score: 1, coverage: 0, elites: 0 }, null)).toBe('search archive QD-score 1.00, coverage 0.0% (0 cells)')
  })
})
