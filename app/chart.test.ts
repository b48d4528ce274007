// The charts' arithmetic: ticks a reader can read at a glance, and marks that match what the books record.
import { describe, expect, test } from 'vitest'
import type { BooksType as Books } from '../engine/contracts/api.js'
import { linearTicks, logTicks, marksOf, roundUp, tickLabel } from './chart'

describe('ticks', () => {
  test('the step axis of a 348..697 timeline ticks at round steps, not at its ends', () => {
    expect(linearTicks(348, 697, 6)).toEqual([350, 400, 450, 500, 550, 600, 650])
    expect(linearTicks(0, 3000)).toEqual([0, 500, 1000, 1500, 2000, 2500, 3000])
    expect(linearTicks(0, 0.93)).toEqual([0, 0.2, 0.4, 0.6, 0.8])
    // generations are whole: no tick at 1.5
    expect(linearTicks(1, 3, 6, true)).toEqual([1, 2, 3])
  })

  test('a log axis ticks at powers of ten, and at 2 and 5 times them over a short range', () => {
    expect(logTicks(0.004, 21)).toEqual([0.01, 0.1, 1, 10])
    expect(logTicks(3, 60)).toEqual([5, 10, 20, 50])
    expect(logTicks(0, 10)).toEqual([])
  })

  test("the view's absolute scale rounds a peak up to 1, 2 or 5 times a power of ten", () => {
    expect([0.0218, 0.27, 0.5, 0.51, 3, 677, 0].map(roundUp)).toEqual([0.05, 0.5, 0.5, 1, 5, 1000, 1])
  })

  test('labels are short', () => {
    expect([0, 0.25, 12, 1500, 25_000, 3_000_000, 0.0002].map(tickLabel)).toEqual(['0', '0.25', '12', '1500', '25k', '3M', '2e-4'])
  })
})

describe('marks', () => {
  const at = (step: number, energy: number, injected: number): Books => ({
    step,
    energy,
    injected,
    bulk_loss: 0,
    boundary_loss: 0,
    saturation: 0,
    noise_work: 0,
  })

  test('a write shows where the injected total rises, a dream where it falls; steady resonance shows nothing', () => {
    const points = [at(0, 1, 1), at(10, 0.9, 1), at(20, 1.9, 2), at(30, 1.8, 2), at(40, 0.7, 0.9)]
    expect(marksOf(points)).toEqual([
      { step: 20, kind: 'in', delta: 1 },
      { step: 40, kind: 'dream', delta: expect.closeTo(-1.1, 12) },
    ])
    expect(marksOf([at(0, 1, 1), at(10, 0.5, 1), at(20, 0.25, 1 + 1e-9)])).toEqual([])
  })
})
