// Proposals: the format, and "in the future" as a calendar day in America/Chicago, around the DST
// changes of 2026 (spring forward 8 March 02:00 CST, fall back 1 November 02:00 CDT).
import { describe, expect, it } from 'vitest'
import type { CrystalError } from '../errors.js'
import { chicagoDay, chicagoMidnight, parseProposal, PROPOSAL_FORMAT } from './proposal.js'

const at = (iso: string) => Date.parse(iso)
const refusal = (text: string, now: number) => {
  try {
    parseProposal(text, now)
  } catch (e) {
    return e as CrystalError
  }
  throw new Error('accepted')
}

describe('proposals', () => {
  it('reads the claim, the day and the category', () => {
    const p = parseProposal('propose: the Cubs win the pennant | by 2026-12-01 | category Sports', at('2026-11-21T06:00:00Z'))
    expect(p).toMatchObject({ claim: 'the Cubs win the pennant', by: '2026-12-01', category: 'sports' })
    expect(new Date(p.closes_at).toISOString()).toBe('2026-12-02T06:00:00.000Z') // midnight CST
  })

  it('past, today and tomorrow around the spring-forward change (8 March 2026)', () => {
    // 05:30 UTC on 8 March is 23:30 CST on 7 March: "today" in Chicago is still the 7th
    const now = at('2026-03-08T05:30:00Z')
    expect(chicagoDay(now)).toBe('2026-03-07')
    expect(refusal('propose: x | by 2026-03-06 | category t', now).message).toContain('not in the future')
    expect(refusal('propose: x | by 2026-03-07 | category t', now).message).toContain('today is 2026-03-07')
    const p = parseProposal('propose: x | by 2026-03-08 | category t', now)
    // the 8th is 23 hours long: it ends at 05:00 UTC on the 9th (midnight CDT)
    expect(new Date(p.closes_at).toISOString()).toBe('2026-03-09T05:00:00.000Z')
    expect(p.closes_at - chicagoMidnight('2026-03-08')).toBe(23 * 3600_000)
  })

  it('past, today and tomorrow around the fall-back change (1 November 2026)', () => {
    // 04:30 UTC on 2 November is 22:30 CST on 1 November (a 25-hour day)
    const now = at('2026-11-02T04:30:00Z')
    expect(chicagoDay(now)).toBe('2026-11-01')
    expect(refusal('propose: x | by 2026-11-01 | category t', now).code).toBe('bad_proposal')
    expect(refusal('propose: x | by 2026-10-31 | category t', now).code).toBe('bad_proposal')
    const p = parseProposal('propose: x | by 2026-11-02 | category t', now)
    expect(new Date(p.closes_at).toISOString()).toBe('2026-11-03T06:00:00.000Z')
    expect(chicagoMidnight('2026-11-02') - chicagoMidnight('2026-11-01')).toBe(25 * 3600_000)
    // and one minute after Chicago's midnight the 2nd is today, so no longer in the future
    expect(refusal('propose: x | by 2026-11-02 | category t', at('2026-11-02T06:01:00Z')).message).toContain('today is 2026-11-02')
  })

  it('malformed proposals get the format in the reply', () => {
    const now = at('2026-06-01T12:00:00Z')
    for (const text of [
      '',
      'hello',
      'propose: x',
      'propose: x | by 2026-13-01 | category t',
      'propose: x | by 2026-02-30 | category t',
      'propose:  | by 2027-01-01 | category t',
      'propose: x | by 01/02/2027 | category t',
      'propose: x | by 2027-01-01',
    ]) {
      const e = refusal(text, now)
      expect(e.code).toBe('bad_proposal')
      expect(e.message).toContain(PROPOSAL_FORMAT)
      expect(e.hint).toBe(PROPOSAL_FORMAT)
    }
  })

  it('the last date is 9999-12-30: 9999-12-31 would close in the year 10000 in UTC and is refused, naming the date', () => {
    const now = at('2026-06-01T12:00:00Z')
    const p = parseProposal('propose: x | by 9999-12-30 | category t', now)
    expect(new Date(p.closes_at).toISOString()).toBe('9999-12-31T06:00:00.000Z')
    const e = refusal('propose: x | by 9999-12-31 | category t', now)
    expect(e.code).toBe('bad_proposal')
    expect(e.message).toContain('9999-12-31 would close at +010000-01-01T06:00:00.000Z')
    expect(e.message).toContain(PROPOSAL_FORMAT)
    // year 0000 is a calendar year (not 1900, as Date.UTC reads it), and long past
    expect(refusal('propose: x | by 0000-01-01 | category t', now).message).toContain('not in the future')
    expect(refusal('propose: x | by 0000-02-29 | category t', now).message).toContain('not in the future')
    expect(refusal('propose: x | by 2027-02-29 | category t', now).message).toContain('not a calendar date')
  })
})
