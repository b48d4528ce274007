// Selection's hard rules: no repeat within the window, the block's BPM band, the nearest tempo when
// the band is empty, and rotation through the library.
import { describe, expect, test } from 'vitest'
import type { Track } from '../contracts/station.js'
import { BLOCKS } from './schedule.js'
import { pickNext } from './selection.js'

const track = (id: string, bpm: number | null): Track => ({ id, artist: 'a', album: 'b', title: id, duration_s: 60, bpm, key: null })
const library = [track('slow72', 72), track('mid96', 96), track('mid100', 100), track('fast128', 128), track('fast140', 140), track('unknown', null)]

describe('selection', () => {
  test("a day of picks in one block: every pick within the block's band, none repeated within the window", () => {
    const block = BLOCKS['Evening Signals'] // 96..140 BPM
    const history: string[] = []
    for (let i = 0; i < 50; i++) {
      const { track: t, in_band } = pickNext(library, block, history, 3)
      expect(in_band).toBe(true)
      expect(t.bpm === null || (t.bpm >= block.bpm.min && t.bpm <= block.bpm.max)).toBe(true)
      expect(history.slice(-3)).not.toContain(t.id)
      history.push(t.id)
    }
    // the control: slow72 is outside the band and never came up; everything in it took turns
    expect(history).not.toContain('slow72')
    expect(new Set(history)).toEqual(new Set(['mid96', 'mid100', 'fast128', 'fast140', 'unknown']))
  })

  test('when the window leaves nothing in the band, the nearest tempo plays (and says so); the window still holds', () => {
    const block = BLOCKS['Peace Oration'] // 60..90 BPM
    const lib = [track('slow72', 72), track('mid96', 96), track('fast140', 140)]
    expect(pickNext(lib, block, [], 1)).toMatchObject({ track: { id: 'slow72' }, in_band: true })
    expect(pickNext(lib, block, ['slow72'], 1)).toMatchObject({ track: { id: 'mid96' }, in_band: false })
  })

  test('a library of one track plays it again and again', () => {
    const lib = [track('only', 100)]
    expect(pickNext(lib, BLOCKS['Evening Signals'], ['only', 'only'], 0).track.id).toBe('only')
  })

  test('a window as long as the library still leaves one track to play', () => {
    const lib = [track('x', 100), track('y', 100)]
    expect(pickNext(lib, BLOCKS['Evening Signals'], ['x', 'y'], 10).track.id).toBe('x')
  })
})

describe("selection with the medium's ranking", () => {
  test('the highest score among the allowed tracks wins; a track outside the band or the window does not, however high; no score at all falls back to recency', () => {
    const block = BLOCKS['Evening Signals'] // 96..140 BPM
    const scores = new Map([['slow72', 0.9], ['mid100', 0.3], ['fast128', 0.5], ['fast140', 0.2]])
    expect(pickNext(library, block, [], 3, { by: 'mood', scores })).toMatchObject({ track: { id: 'fast128' }, by: 'mood', resonance: 0.5 })
    expect(pickNext(library, block, ['fast128'], 3, { by: 'cluster', scores })).toMatchObject({ track: { id: 'mid100' }, by: 'cluster', resonance: 0.3 })
    expect(pickNext(library, block, ['mid100', 'fast128', 'fast140'], 3, { by: 'mood', scores })).toMatchObject({ track: { id: 'mid96' }, by: 'recency', resonance: null })
  })
})
