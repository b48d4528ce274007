// The MAP-Elites grid: where descriptors fall, and what a cell keeps.
import { describe, expect, test } from 'vitest'
import { CLASS_TOKENS } from '../contracts/registry.js'
import { Archive, ARCHIVE_CELLS, AXES, AXIS_NAMES, binsOf, cellKey, cellOf, type Descriptors } from './archive.js'

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
