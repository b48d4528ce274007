// The lineup counts picks in the order they play, so a request that jumps the queue cannot let the
// track picked before it follow itself. The control: the same picks counted in the order they were
// made, as the station did until a CI run heard a skip fade one track into itself.
import { describe, expect, test } from 'vitest'
import type { Track } from '../../engine/contracts/station.js'
import { BLOCKS } from '../../engine/station/schedule.js'
import { pickNext, type Ranking } from '../../engine/station/selection.js'
import { rng } from '../../engine/util/rng.js'
import { Lineup, PAST_KEPT, type Planned } from './lineup.js'

const track = (id: string): Track => ({ id, artist: '', album: '', title: id, duration_s: 60, bpm: null, key: null })
// tempo unknown: every track is in the block's pool; three of them make a no-repeat window of one
const block = BLOCKS['Morning Drift']
const [A, B, C] = ['A', 'B', 'C'].map(track)
const tracks = [A, B, C]
/** Requests `p` and answers its place. */
const placed = (lineup: Lineup, p: Planned, keepFirst: boolean) => (lineup.request(p, keepFirst), lineup.placeOf(p))
const mood = (scores: Record<string, number>): Ranking => ({ by: 'mood', scores: new Map(Object.entries(scores)) })

describe('the lineup', () => {
  test("a request before a track already picked: the next pick is not that track again (the pick order's window would let it follow itself)", () => {
    const ranking = mood({ C: 0.9, A: 0.5, B: 0.1 })
    const lineup = new Lineup()
    const picked: string[] = []
    const pick = (order: readonly string[]) => {
      const p = pickNext(tracks, block, order, Infinity, ranking).track
      picked.push(p.id)
      lineup.push({ track: p, by: 'mood' })
      return p
    }
    lineup.push({ track: A, by: 'mood' })
    picked.push('A')
    lineup.leave(lineup.first!) // A on air
    expect(pick(lineup.order())).toBe(C) // the mood's favourite, cued
    // a request for B goes before C; B goes on air, then C is cued and the one after it is picked
    expect(placed(lineup, { track: B, by: 'request' }, false)).toBe(1)
    picked.push('B')
    lineup.leave(lineup.first!)
    expect(lineup.order()).toEqual(['A', 'B', 'C'])
    expect(lineup.last!.track).toBe(C)
    expect(pickNext(tracks, block, lineup.order(), Infinity, ranking).track).toBe(A)
    // the control: counted in the order of the picks (B last), the window holds B and C follows C
    expect(picked).toEqual(['A', 'C', 'B'])
    expect(pickNext(tracks, block, picked, Infinity, ranking).track).toBe(C)
  })

  test('requests queue after earlier requests and after the track fading in, taking the place of the same track picked there; a track gone from the library leaves, but for the cued one', () => {
    const lineup = new Lineup()
    const picks: Planned[] = [A, B].map((t) => ({ track: t, by: 'mood' }))
    for (const p of picks) lineup.push(p)
    expect(placed(lineup, { track: C, by: 'request' }, true)).toBe(2)
    expect(placed(lineup, { track: A, by: 'request' }, true)).toBe(3)
    expect(placed(lineup, { track: B, by: 'request' }, false)).toBe(1)
    expect(lineup.order()).toEqual(['B', 'A', 'C', 'A', 'B'])
    expect(lineup.requests().map((t) => t.id)).toEqual(['B', 'C', 'A'])
    lineup.keepOnly(new Set(['C']), picks[0])
    expect(lineup.order()).toEqual(['A', 'C'])
    lineup.leave(lineup.first!)
    expect(lineup.order()).toEqual(['A', 'C'])
    expect(lineup.length).toBe(1)
    // a request for the track already picked for its place takes that place once
    lineup.push({ track: B, by: 'mood' })
    expect(placed(lineup, { track: B, by: 'request' }, true)).toBe(2)
    expect(lineup.order()).toEqual(['A', 'C', 'B'])
    expect(lineup.requests().map((t) => t.id)).toEqual(['C', 'B'])
    expect(lineup.length).toBe(2)
  })

  test(`the past keeps the last ${PAST_KEPT.toLocaleString('en')} picks, in order`, () => {
    const lineup = new Lineup()
    for (let i = 0; i < PAST_KEPT + 5; i++) {
      lineup.push({ track: tracks[i % 3], by: 'mood' })
      lineup.leave(lineup.first!)
    }
    lineup.push({ track: A, by: 'mood' })
    const order = lineup.order()
    expect(order).toHaveLength(PAST_KEPT + 1)
    // the oldest five gone: the first kept is pick 5 (5 % 3 = 2, C)
    expect(order.slice(0, 3)).toEqual(['C', 'A', 'B'])
    expect(order.at(-1)).toBe('A')
  })

  test('over 3,000 random picks, requests and plays with a window of one, no pick follows the track before it; counted in pick order, picks do', () => {
    /** Plays `steps` events with rankings drawn at random; returns the picks (not requests) that
     * played right after the same track. */
    const run = (countByPlay: boolean) => {
      const rand = rng(7)
      const lineup = new Lineup()
      const pickOrder: string[] = []
      const played: Planned[] = []
      for (let step = 0; step < 3000; step++) {
        const r = rand()
        if (r < 0.15) {
          const p: Planned = { track: tracks[Math.floor(rand() * 3)], by: 'request' }
          lineup.request(p, rand() < 0.5)
          pickOrder.push(p.track.id)
        } else if (lineup.length < 2) {
          const ranking = mood(Object.fromEntries(tracks.map((t) => [t.id, rand() - 0.3])))
          const track = pickNext(tracks, block, countByPlay ? lineup.order() : pickOrder, Infinity, ranking).track
          lineup.push({ track, by: 'mood' })
          pickOrder.push(track.id)
        } else {
          played.push(lineup.first!)
          lineup.leave(lineup.first!)
        }
      }
      return played.filter((p, i) => i > 0 && p.by !== 'request' && p.track === played[i - 1].track).length
    }
    expect(run(true)).toBe(0)
    expect(run(false)).toBeGreaterThan(0)
  })
})
