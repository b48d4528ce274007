// The archivist's batching: everything written once, in order, in batches no larger than asked; a
// slow writer gets bigger batches (the load decides), a trickle gets batches of one.
import { describe, expect, test } from 'vitest'
import { inBatches } from './archivist.js'

async function* items(count: number, gapMs: number) {
  for (let i = 0; i < count; i++) {
    if (gapMs) await new Promise((r) => setTimeout(r, gapMs))
    yield i
  }
}

describe('inBatches', () => {
  test('a slow writer under a burst: all items once, in order, batches grow but stay within the cap', async () => {
    const batches: number[][] = []
    await inBatches(items(200, 0), async (b) => (batches.push(b), new Promise((r) => setTimeout(r, 5))), 50)
    expect(batches.flat()).toEqual([...Array(200).keys()])
    expect(Math.max(...batches.map((b) => b.length))).toBe(50)
    expect(batches.length).toBeLessThan(20)
  })

  test('a trickle: each item is written on its own, nobody waits for a batch to fill', async () => {
    const batches: number[][] = []
    await inBatches(items(5, 10), async (b) => void batches.push(b), 50)
    expect(batches).toEqual([[0], [1], [2], [3], [4]])
  })
})
