// A program's cost before it runs: every command that steps the field counts, not only RESONATE, and
// the budget in cell updates buys fewer steps as N grows (1 / N^2).
import { describe, expect, test } from 'vitest'
import { programCost, stepBudget } from './cost.js'
import { STABILIZE } from './interpret.js'
import { parse } from './parse.js'

const costs = (source: string, genomeSteps: Record<string, number> = {}) =>
  programCost(parse(source).commands, (id) => genomeSteps[id] ?? 0).map((c) => [c.command, c.steps] as const)

describe('program cost', () => {
  test('conditions are free, an injection is one step, RESONATE its steps, and probe and recall sweep back over the field’s age', () => {
    expect(costs('MATERIAL vacuum\nSEED 3\nTEMPERATURE 4\nNOISE 0\nWRITE "a"\nPULSE 0.5 0.5\nRESONATE 700\nRECALL "a"\nPROBE "a"')).toEqual(
      [
        ['MATERIAL', 0],
        ['SEED', 0],
        ['TEMPERATURE', 0],
        ['NOISE', 0],
        ['WRITE', 1],
        ['PULSE', 1],
        ['RESONATE', 700],
        ['RECALL', 701 + 1],
        ['PROBE', 701],
      ],
    )
  })

  test('a recall also counts its memories pair by pair: a program of a thousand WRITEs and a RECALL is not 1% of the budget', () => {
    const writes = (n: number) => Array.from({ length: n }, (_, i) => `WRITE "memory ${i}"`).join('\n')
    const recall = (n: number) => costs(`${writes(n)}\nRECALL "memory 7"\nPROBE "memory 7"`).slice(-2)
    // as if every memory were written at one moment (measured: 0.44 step a pair at N = 128)
    expect(recall(400)).toEqual([
      ['RECALL', 1 + 80_000],
      ['PROBE', 1],
    ])
    // over the server's budget at N = 128 (100,000 steps), where it took 23 s and counted 1,001 steps
    expect(recall(1000)[0][1]).toBeGreaterThan(stepBudget(100_000 * 128 * 128, 128))
  })

  test('STABILIZE, DREAM, MERGE and SPLIT are not free: each counts the steps it runs at most', () => {
    const [[, stabilize], [, dream], [, merge], [, split]] = costs('STABILIZE\nDREAM deep\nMERGE CRY-1 CRY-2\nSPLIT CRY-2', {
      'CRY-000001': 1000,
      'CRY-000002': 3000,
    })
    // at least its windows of observation
    expect(stabilize).toBeGreaterThanOrEqual(STABILIZE.max_windows * STABILIZE.window_steps)
    expect(dream).toBeGreaterThan(0)
    // a derived genome is evaluated twice (clean and noisy) for at least its parents' longer resonance
    expect(merge).toBeGreaterThanOrEqual(2 * 3000)
    // two children, each evaluated
    expect(split).toBeGreaterThanOrEqual(2 * 2 * 3000)
    expect(split).toBe(2 * merge)
  })

  test('the budget is in cell updates: four times the cells, a quarter of the steps', () => {
    const cells = 100_000 * 128 * 128
    expect(stepBudget(cells, 128)).toBe(100_000)
    expect(stepBudget(cells, 256)).toBe(25_000)
    expect(stepBudget(cells, 1024)).toBe(1562)
  })
})
