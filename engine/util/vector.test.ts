// Cosine as the registry's novelty and similarity search depend on it: finite for every input, exact
// in the usual case, right where the plain sums leave float64; and what counts as no direction.
import { describe, expect, test } from 'vitest'
import { cosine, directionProblem } from './vector.js'

const unit = Array.from({ length: 64 }, (_, i) => Math.sin(i + 1) / 5.6)
const other = Array.from({ length: 64 }, (_, i) => Math.cos(3 * i) / 5.6)

describe('cosine', () => {
  test('the usual case keeps its plain arithmetic, to the last bit', () => {
    let ab = 0
    let aa = 0
    let bb = 0
    for (let i = 0; i < unit.length; i++) {
      ab += unit[i] * other[i]
      aa += unit[i] * unit[i]
      bb += other[i] * other[i]
    }
    expect(cosine(unit, other)).toBe(ab / Math.sqrt(aa * bb))
  })

  test('twins of 1e308 are alike (the plain sums overflow to NaN); so are twins of 1e100 over 4096 entries (the product of norms overflows to 0)', () => {
    expect(
      cosine(
        unit.map((v) => v * 1e308),
        unit.map((v) => v * 1e308),
      ),
    ).toBeCloseTo(1, 12)
    const big = Array.from({ length: 4096 }, (_, i) => (i % 3) * 1e100)
    expect(cosine(big, big)).toBeCloseTo(1, 12)
    expect(
      cosine(
        unit.map((v) => v * 1e-200),
        unit,
      ),
    ).toBeCloseTo(1, 12)
    expect(
      cosine(
        unit.map((v) => v * 1e300),
        other,
      ),
    ).toBeCloseTo(cosine(unit, other), 12)
  })

  test('no direction (zeros, NaN, an infinity) or lengths that differ: 0, never NaN', () => {
    const zeros = unit.map(() => 0)
    expect(cosine(zeros, unit)).toBe(0)
    expect(cosine(zeros, zeros)).toBe(0)
    expect(cosine([Number.NaN, ...unit.slice(1)], unit)).toBe(0)
    expect(cosine([Number.POSITIVE_INFINITY, ...unit.slice(1)], unit)).toBe(0)
    expect(cosine(unit, unit.slice(1))).toBe(0)
    expect(cosine([], [])).toBe(0)
  })
})

describe('directionProblem', () => {
  test('a unit signature has none; empty, non-finite, all zeros and an overflowing norm each say which', () => {
    expect(directionProblem(unit)).toBeUndefined()
    expect(directionProblem(unit.map((v) => v * 1e150))).toBeUndefined()
    expect(directionProblem([])).toBe('is empty')
    expect(directionProblem([0.5, Number.NaN])).toBe('has a non-finite value (NaN) at [1]')
    expect(directionProblem(unit.map(() => 0))).toContain('is all zeros')
    expect(directionProblem(unit.map(() => 1e308))).toContain('a norm beyond float64')
  })
})
