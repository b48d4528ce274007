// The byte-bounded cache recall keeps its patterns in, on the host and on a device: what leaves first,
// what a use or a replacement does, and what its callback is told.
import { describe, expect, test } from 'vitest'
import { ByteLru } from './lru.js'

/** A cache bounded at `bound` bytes, and the keys it dropped, in order. */
function cache(bound: number) {
  const dropped: string[] = []
  const lru = new ByteLru<string, string>(
    () => bound,
    (value, key) => dropped.push(`${key}=${value}`),
  )
  return { lru, dropped }
}

const keys = (lru: ByteLru<string, string>) => ['a', 'b', 'c', 'd', 'e'].filter((k) => lru.has(k))

describe('a cache bounded by bytes', () => {
  test('keeps within its bound by dropping the least recently set first, and tells its callback', () => {
    const { lru, dropped } = cache(30)
    for (const k of ['a', 'b', 'c']) lru.set(k, k.toUpperCase(), 10)
    expect(lru.bytes).toBe(30)
    expect(dropped).toEqual([])
    lru.set('d', 'D', 10)
    lru.set('e', 'E', 15)
    expect(keys(lru)).toEqual(['d', 'e'])
    expect(lru.bytes).toBe(25)
    expect(dropped).toEqual(['a=A', 'b=B', 'c=C'])
  })

  test('a get is a use: the entry read goes to the back of the queue; has is not', () => {
    const { lru, dropped } = cache(30)
    for (const k of ['a', 'b', 'c']) lru.set(k, k.toUpperCase(), 10)
    expect(lru.get('a')).toBe('A')
    expect(lru.has('b')).toBe(true)
    expect(lru.get('x')).toBeUndefined()
    lru.set('d', 'D', 10)
    expect(dropped).toEqual(['b=B'])
    expect(keys(lru)).toEqual(['a', 'c', 'd'])
  })

  test('setting a key again replaces its value and size and makes it the most recent; the old value is dropped only when it differs', () => {
    const { lru, dropped } = cache(30)
    for (const k of ['a', 'b', 'c']) lru.set(k, k.toUpperCase(), 10)
    lru.set('a', 'A', 10) // the same value: a use, nothing dropped
    expect(dropped).toEqual([])
    lru.set('b', 'B2', 15)
    expect(dropped).toEqual(['b=B', 'c=C'])
    expect(keys(lru)).toEqual(['a', 'b'])
    expect(lru.bytes).toBe(25)
    expect(lru.get('b')).toBe('B2')
  })

  test('a value larger than the bound is not kept and leaves the rest alone; a spared one is kept past the bound', () => {
    const { lru, dropped } = cache(30)
    lru.set('a', 'A', 10)
    lru.set('b', 'B', 31)
    expect(keys(lru)).toEqual(['a'])
    expect(dropped).toEqual(['b=B'])
    // spared (a device sweep's own patterns): kept, and only the unspared make room
    const inUse = new Set(['b', 'c'])
    lru.set('c', 'C', 20, (k) => inUse.has(k))
    lru.set('b', 'B', 31, (k) => inUse.has(k))
    expect(keys(lru)).toEqual(['b', 'c'])
    expect(lru.bytes).toBe(51)
    expect(dropped).toEqual(['b=B', 'a=A'])
  })

  test('the bound is read at each set, and clear drops everything', () => {
    let bound = 40
    const dropped: number[] = []
    const lru = new ByteLru<number, number>(
      () => bound,
      (v) => dropped.push(v),
    )
    for (const k of [1, 2, 3, 4]) lru.set(k, k, 10)
    bound = 20
    lru.set(5, 5, 10)
    expect(dropped).toEqual([1, 2, 3])
    expect(lru.size).toBe(2)
    lru.clear()
    expect(dropped).toEqual([1, 2, 3, 4, 5])
    expect([lru.size, lru.bytes]).toEqual([0, 0])
  })
})
