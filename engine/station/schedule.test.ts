// Document 2's schedule in America/Chicago on an ordinary day and across both DST changes: programmes
// keep their wall-clock times, the gap hour has no teaser, the repeated hour has two.
import { describe, expect, test } from 'vitest'
import { BLOCKS, checkTimeZone, scheduleAt, upcoming } from './schedule.js'

const Z = (iso: string) => new Date(iso)
/** Every programme start in [from, to), as [kind, ISO time]. */
const between = (from: string, to: string) =>
  upcoming(Z(from), 200)
    .filter((p) => p.at < Z(to))
    .map((p) => [p.kind, p.at.toISOString().slice(0, 16)])

describe('the daily schedule (America/Chicago)', () => {
  test('an ordinary day in summer (CDT, UTC-5): every slot at its local time, a teaser every hour', () => {
    const day = between('2026-06-10T05:00:00Z', '2026-06-11T05:00:00Z')
    expect(day.filter(([k]) => k === 'news_teaser')).toHaveLength(24)
    expect(day.filter(([k]) => k !== 'news_teaser')).toEqual([
      ['peace_oration', '2026-06-10T05:00'],
      ['gossip_column', '2026-06-10T09:20'],
      ['news_broadcast', '2026-06-10T12:00'],
      ['podcast', '2026-06-10T15:00'],
      ['peace_oration', '2026-06-10T17:00'],
      ['gossip_column', '2026-06-10T21:20'],
      ['news_broadcast', '2026-06-10T22:00'],
      ['podcast', '2026-06-11T03:00'],
    ])
  })

  test('spring forward (8 March 2026, 02:00 CST -> 03:00 CDT): a 23-hour day, no 02:30 teaser, later slots move one hour earlier in UTC', () => {
    const day = between('2026-03-08T06:00:00Z', '2026-03-09T05:00:00Z')
    const teasers = day.filter(([k]) => k === 'news_teaser').map(([, t]) => t)
    expect(teasers).toHaveLength(23)
    // 00:30 and 01:30 CST, then 03:30 CDT: one teaser per hour that exists
    expect(teasers.slice(0, 3)).toEqual(['2026-03-08T06:30', '2026-03-08T07:30', '2026-03-08T08:30'])
    expect(day).toContainEqual(['gossip_column', '2026-03-08T09:20']) // 04:20 CDT
    expect(between('2026-03-07T06:00:00Z', '2026-03-08T06:00:00Z')).toContainEqual(['gossip_column', '2026-03-07T10:20']) // 04:20 CST the day before
  })

  test('fall back (1 November 2026, 02:00 CDT -> 01:00 CST): a 25-hour day, the repeated 01:30 gets both teasers, daily slots happen once', () => {
    const day = between('2026-11-01T05:00:00Z', '2026-11-02T06:00:00Z')
    const teasers = day.filter(([k]) => k === 'news_teaser').map(([, t]) => t)
    expect(teasers).toHaveLength(25)
    expect(teasers).toContain('2026-11-01T06:30') // 01:30 CDT
    expect(teasers).toContain('2026-11-01T07:30') // 01:30 CST
    expect(day.filter(([k]) => k === 'peace_oration')).toEqual([
      ['peace_oration', '2026-11-01T05:00'], // 00:00 CDT
      ['peace_oration', '2026-11-01T18:00'], // 12:00 CST
    ])
    expect(day).toContainEqual(['gossip_column', '2026-11-01T10:20']) // 04:20 CST
  })

  test('what is on: a programme for its length, the music block by local hour between them, the podcast by weekday', () => {
    expect(scheduleAt(Z('2026-03-08T08:31:00Z'))).toMatchObject({ programme: { kind: 'news_teaser' }, block: BLOCKS['News Teaser'] })
    expect(scheduleAt(Z('2026-03-08T08:45:00Z'))).toMatchObject({ programme: null, block: BLOCKS['Evening Signals'] }) // 03:45 CDT
    expect(scheduleAt(Z('2026-03-08T09:00:00Z'))).toMatchObject({ programme: null, block: BLOCKS['Morning Drift'] }) // 04:00 CDT
    expect(scheduleAt(Z('2026-03-08T09:25:00Z'))).toMatchObject({
      programme: { kind: 'gossip_column', title: 'Gossip Column' },
      block: BLOCKS['Gossip Column'],
    })
    // Sunday 10:05 CDT: the Sunday podcast, in the morning's music block
    expect(scheduleAt(Z('2026-03-08T15:05:00Z'))).toMatchObject({
      programme: { kind: 'podcast', title: 'Sunday Long Read' },
      block: BLOCKS['Morning Drift'],
    })
    // the second 01:31 of the fall-back night is a teaser too
    expect(scheduleAt(Z('2026-11-01T07:31:00Z'))).toMatchObject({ programme: { kind: 'news_teaser' } })
    expect(scheduleAt(Z('2026-11-01T07:33:00Z')).programme).toBeNull()
    // midnight's peace oration lasts ten minutes
    expect(scheduleAt(Z('2026-06-10T05:09:59Z'))).toMatchObject({ programme: { kind: 'peace_oration' }, block: BLOCKS['Peace Oration'] })
    expect(scheduleAt(Z('2026-06-10T05:10:00Z')).programme).toBeNull()
  })

  test('the time zone is a setting: the same instant is another block in Berlin; a bad name is a clear error', () => {
    // 2026-06-10 09:00 UTC: 04:00 in Chicago (Morning Drift), 11:00 in Berlin (Morning Drift), 10:00 in
    // Berlin an hour before (the podcast) and 23:00 the evening before in Chicago (Evening Signals)
    expect(scheduleAt(Z('2026-06-10T09:05:00Z'))).toMatchObject({ programme: null, block: BLOCKS['Morning Drift'] })
    expect(scheduleAt(Z('2026-06-10T08:05:00Z'), 'Europe/Berlin')).toMatchObject({
      programme: { kind: 'podcast', title: 'Wednesday Echoes' },
    })
    expect(scheduleAt(Z('2026-06-10T04:05:00Z'))).toMatchObject({ programme: null, block: BLOCKS['Evening Signals'] }) // 23:05 CDT
    expect(scheduleAt(Z('2026-06-10T04:05:00Z'), 'Europe/Berlin')).toMatchObject({ programme: null, block: BLOCKS['Morning Drift'] }) // 06:05 CEST
    expect(upcoming(Z('2026-06-10T00:00:00Z'), 1, 'UTC')[0]).toMatchObject({ kind: 'peace_oration', at: Z('2026-06-10T00:00:00Z') })
    expect(() => checkTimeZone('Mars/Olympus')).toThrow(/SVC_STATION_TIME_ZONE is not a time zone: "Mars\/Olympus"/)
  })

  test('every block has a documented mood in 0..1, a BPM band and a speak-now dream state', () => {
    for (const b of Object.values(BLOCKS)) {
      for (const v of Object.values(b.mood)) expect(v).toBeGreaterThanOrEqual(0), expect(v).toBeLessThanOrEqual(1)
      expect(b.bpm.min).toBeLessThan(b.bpm.max)
      expect(['awake', 'light', 'deep']).toContain(b.speak_when)
    }
  })
})
