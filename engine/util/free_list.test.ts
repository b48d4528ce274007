// The kept things of engine/util/free_list.ts: which request takes which, the limits, and the idle ones leaving.
import { afterEach, expect, test, vi } from 'vitest'
import { FreeList } from './free_list.js'

/** Things that are their own size in bytes, with those dropped listed. */
function list(limits: ConstructorParameters<typeof FreeList<number>>[2]) {
  const dropped: number[] = []
  return {
    kept: new FreeList<number>(
      (t) => t,
      (t) => dropped.push(t),
      limits,
    ),
    dropped,
  }
}

afterEach(() => {
  vi.useRealTimers()
})

test('a request takes the smallest kept thing that holds it and is at most twice its size', () => {
  const { kept } = list({ count: 8, bytes: 1000 })
  for (const t of [100, 150, 400]) kept.give(t)
  expect(kept.take(120)).toBe(150)
  expect(kept.take(300)).toBe(400)
  // 100 holds 40, but is more than twice it
  expect(kept.take(40)).toBeUndefined()
  expect(kept.take(100)).toBe(100)
  expect(kept.size).toBe(0)
})

test('an exact list hands out only things of the size asked for', () => {
  const { kept } = list({ count: 8, bytes: 1000, exact: true })
  kept.give(160)
  expect(kept.take(150)).toBeUndefined()
  expect(kept.take(160)).toBe(160)
})

test('past the count or the bytes the oldest leave, and one larger than the bytes is not kept', () => {
  const { kept, dropped } = list({ count: 2, bytes: 500 })
  for (const t of [100, 200, 300]) kept.give(t)
  expect(dropped).toEqual([100])
  // 250 makes three (200 leaves), then 550 bytes (300 leaves)
  kept.give(250)
  expect(dropped).toEqual([100, 200, 300])
  kept.give(600)
  expect(dropped).toEqual([100, 200, 300, 600])
  expect(kept.take(250)).toBe(250)
})

test('things kept idle past idleMs leave on their own, those given later stay until their own time', () => {
  vi.useFakeTimers()
  const { kept, dropped } = list({ count: 8, bytes: 1000, idleMs: 1000 })
  kept.give(100)
  vi.advanceTimersByTime(600)
  kept.give(200)
  vi.advanceTimersByTime(500)
  expect(dropped).toEqual([100])
  expect(kept.size).toBe(1)
  vi.advanceTimersByTime(600)
  expect(dropped).toEqual([100, 200])
  expect(kept.size).toBe(0)
})
