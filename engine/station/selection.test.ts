// Selection's rules: the block's pool (its band, widened when small), the no-repeat window sized to
// the pool, every pool track due within two pools of picks, and the mood choosing among the rest.
import { describe, expect, test } from 'vitest'
import type { Track } from '../contracts/station.js'
import { BLOCKS } from './schedule.js'
import { blockPool, DUE_AFTER_POOLS, noRepeatWindow, pickNext, type Ranking } from './selection.js'

const track = (id: string, bpm: number | null): Track => ({ id, artist: 'a', album: 'b', title: id, duration_s: 60, bpm, key: null })
const library = [
  track('slow72', 72),
  track('mid96', 96),
  track('mid100', 100),
  track('fast128', 128),
  track('fast140', 140),
  track('unknown', null),
]
// the demo library's tempi (server/station/demo.ts): Morning Drift's band (70-112) holds five of them
const DEMO = [120, 96, 84, 128, 110, 140, 72, 100].map((bpm, i) => track(`demo${i}_${bpm}`, bpm))

/** `count` picks in `block` from an empty history. */
function day(tracks: Track[], block: (typeof BLOCKS)[keyof typeof BLOCKS], count: number, ranking?: Ranking): string[] {
  const history: string[] = []
  for (let i = 0; i < count; i++) history.push(pickNext(tracks, block, history, Infinity, ranking).track.id)
  return history
}

describe('selection', () => {
  test("a day of picks in one block: every pick within the block's band, none repeated within half the pool", () => {
    const block = BLOCKS['Evening Signals'] // 96..140 BPM: a pool of five, a window of two
    const history: string[] = []
    for (let i = 0; i < 50; i++) {
      const { track: t, in_band } = pickNext(library, block, history)
      expect(in_band).toBe(true)
      expect(t.bpm === null || (t.bpm >= block.bpm.min && t.bpm <= block.bpm.max)).toBe(true)
      expect(history.slice(-2)).not.toContain(t.id)
      history.push(t.id)
    }
    // the control: slow72 is outside the band and never came up; everything in it took turns
    expect(history).not.toContain('slow72')
    expect(new Set(history)).toEqual(new Set(['mid96', 'mid100', 'fast128', 'fast140', 'unknown']))
  })

  test("the demo library's Morning Drift: a pool of five and a window of two leave the mood three tracks to choose from at every pick", () => {
    const block = BLOCKS['Morning Drift']
    const pool = blockPool(DEMO, block)
    expect(pool.map((t) => t.bpm)).toEqual([96, 84, 110, 72, 100])
    expect(noRepeatWindow(pool.length)).toBe(2)
    // the mood likes the pool in this order; every pick must still leave three open
    const scores = new Map(pool.map((t, i) => [t.id, 1 - i / 10]))
    const history = day(DEMO, block, 60, { by: 'mood', scores })
    for (let i = 0; i < history.length; i++) {
      const open = pool.filter((t) => !history.slice(Math.max(0, i - 2), i).includes(t.id))
      expect(open.length).toBeGreaterThanOrEqual(3)
    }
    // the mood's favourite plays most; every pool track plays, none outside the band
    const plays = (id: string) => history.filter((h) => h === id).length
    expect(plays(pool[0].id)).toBeGreaterThan(plays(pool[4].id))
    expect(new Set(history)).toEqual(new Set(pool.map((t) => t.id)))
    // the control: the mood's order reversed gives another morning, with its favourite played most
    const reversed = day(DEMO, block, 60, { by: 'mood', scores: new Map(pool.map((t, i) => [t.id, i / 10])) })
    expect(reversed).not.toEqual(history)
    expect(reversed.filter((h) => h === pool[4].id).length).toBeGreaterThan(reversed.filter((h) => h === pool[0].id).length)
  })

  // due after two pools' worth of picks; when several fall due together they go one after another
  test(`a track the mood never favours still plays within ${DUE_AFTER_POOLS + 1} pools' worth of picks`, () => {
    const block = BLOCKS['Morning Drift']
    const pool = blockPool(DEMO, block)
    const scores = new Map(pool.map((t, i) => [t.id, 1 - i / 10]))
    const history = day(DEMO, block, 200, { by: 'mood', scores })
    for (const t of pool) {
      const at = history.flatMap((h, i) => (h === t.id ? [i] : []))
      const gaps = [at[0] + 1, ...at.slice(1).map((x, i) => x - at[i])]
      expect(Math.max(...gaps), t.id).toBeLessThanOrEqual((DUE_AFTER_POOLS + 1) * pool.length)
    }
  })

  test('a band that holds fewer than three tracks is widened with the nearest tempi, so the mood still has two to choose from', () => {
    const block = BLOCKS['Peace Oration'] // 60..90 BPM
    const lib = [track('slow72', 72), track('mid96', 96), track('fast140', 140), track('fast128', 128)]
    expect(blockPool(lib, block).map((t) => t.id)).toEqual(['slow72', 'mid96', 'fast128'])
    expect(pickNext(lib, block, [])).toMatchObject({ track: { id: 'slow72' }, in_band: true })
    expect(pickNext(lib, block, ['slow72'])).toMatchObject({ track: { id: 'mid96' }, in_band: false })
    // with the window of one, the mood picks between the other two
    const scores = new Map([
      ['fast128', 0.9],
      ['mid96', 0.1],
      ['slow72', 0.2],
    ])
    expect(pickNext(lib, block, ['slow72', 'fast128'], Infinity, { by: 'mood', scores }).track.id).toBe('slow72')
  })

  test('a library of one track plays it again and again', () => {
    const lib = [track('only', 100)]
    expect(pickNext(lib, BLOCKS['Evening Signals'], ['only', 'only']).track.id).toBe('only')
  })

  test('a cap holds the window shorter than half the pool', () => {
    const lib = [track('x', 100), track('y', 100), track('z', 100), track('w', 100)]
    const scores = new Map([
      ['x', 0.9],
      ['y', 0.5],
      ['z', 0.1],
      ['w', 0.2],
    ])
    expect(pickNext(lib, BLOCKS['Evening Signals'], ['x', 'y'], Infinity, { by: 'mood', scores }).track.id).toBe('w')
    expect(pickNext(lib, BLOCKS['Evening Signals'], ['x', 'y'], 1, { by: 'mood', scores }).track.id).toBe('x')
  })
})

describe("selection with the medium's ranking", () => {
  test('the highest score among the allowed tracks wins; a track outside the band or the window does not, however high; no score at all falls back to recency', () => {
    const block = BLOCKS['Evening Signals'] // 96..140 BPM
    const scores = new Map([
      ['slow72', 0.9],
      ['mid100', 0.3],
      ['fast128', 0.5],
      ['fast140', 0.2],
    ])
    expect(pickNext(library, block, [], Infinity, { by: 'mood', scores })).toMatchObject({
      track: { id: 'fast128' },
      by: 'mood',
      resonance: 0.5,
    })
    expect(pickNext(library, block, ['fast128'], Infinity, { by: 'cluster', scores })).toMatchObject({
      track: { id: 'mid100' },
      by: 'cluster',
      resonance: 0.3,
    })
    const fewer = new Map([
      ['slow72', 0.9],
      ['fast128', 0.5],
    ])
    expect(pickNext(library, block, ['fast128'], Infinity, { by: 'mood', scores: fewer })).toMatchObject({
      track: { id: 'mid96' },
      by: 'recency',
      resonance: null,
    })
  })

  test('a track the medium opposes (its reading below minus the floor) is passed over while another allowed track is not opposed; when every one is, recency decides among them all', () => {
    const block = BLOCKS['Evening Signals'] // pool: mid96, mid100, fast128, fast140, unknown
    // the control: no reading at all, recency in library order
    expect(pickNext(library, block, [], Infinity, { by: 'mood', scores: new Map() }).track.id).toBe('mid96')
    const opposed = new Map([
      ['mid96', -0.3],
      ['fast128', -0.2],
    ])
    expect(pickNext(library, block, [], Infinity, { by: 'mood', scores: opposed })).toMatchObject({
      track: { id: 'mid100' },
      by: 'recency',
      resonance: null,
    })
    // a resonant track still wins over the rest
    expect(pickNext(library, block, [], Infinity, { by: 'mood', scores: new Map([...opposed, ['fast140', 0.1]]) }).track.id).toBe('fast140')
    const all = new Map(['mid96', 'mid100', 'fast128', 'fast140', 'unknown'].map((id) => [id, -0.5]))
    expect(pickNext(library, block, [], Infinity, { by: 'mood', scores: all })).toMatchObject({ track: { id: 'mid96' }, by: 'recency' })
  })
})
