// The proposal message of document 2: `propose: <claim> | by <YYYY-MM-DD> | category <topic>`.
// Dates are calendar days in America/Chicago; a market opened from one closes at the end of that day.
import { CrystalError } from '../errors.js'
import { isCalendarDay, isoInstant, utcDay } from './instant.js'

export const PROPOSAL_FORMAT = 'propose: <claim> | by <YYYY-MM-DD> | category <topic>'
export const MARKET_ZONE = 'America/Chicago'

export interface Proposal {
  claim: string
  /** The calendar day, YYYY-MM-DD. */
  by: string
  category: string
  /** The end of `by` in America/Chicago (the next day's midnight there), as epoch ms. */
  closes_at: number
}

const LINE = /^\s*propose:\s*(\S.*?)\s*\|\s*by\s+(\d{4}-\d{2}-\d{2})\s*\|\s*category\s+(\S.*?)\s*$/i

const zoneFormat = new Intl.DateTimeFormat('en-CA', {
  timeZone: MARKET_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
})

/** The calendar day (YYYY-MM-DD) in America/Chicago at an instant. */
export function chicagoDay(at: number): string {
  const p = Object.fromEntries(zoneFormat.formatToParts(at).map((x) => [x.type, x.value]))
  return `${p.year}-${p.month}-${p.day}`
}

/** America/Chicago's offset from UTC at an instant, in ms (-5 h in summer, -6 h in winter). */
function offsetAt(at: number): number {
  const p = Object.fromEntries(zoneFormat.formatToParts(at).map((x) => [x.type, Number(x.value)]))
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(at / 1000) * 1000
}

/** The instant a day starts (local midnight) in America/Chicago; midnight is never in a DST gap there (the change is at 02:00). */
export function chicagoMidnight(day: string): number {
  const [y, m, d] = day.split('-').map(Number)
  return midnightOf(y, m, d)
}

/** As chicagoMidnight, from numbers that may overflow: day d + 1 of the 31st is the next month's first. */
function midnightOf(y: number, m: number, d: number): number {
  const guess = utcDay(y, m, d)
  // the offset at the guess may be the neighbouring day's; a second pass settles it
  const first = guess - offsetAt(guess)
  return guess - offsetAt(first)
}

function refuse(detail: string): never {
  throw new CrystalError('bad_proposal', `${detail}; the format is: ${PROPOSAL_FORMAT}`, { field: 'text' }, PROPOSAL_FORMAT)
}

/** Parses a proposal, refusing (with the format) a malformed one, one whose day is not after today in Chicago, or one that would close past 9999 in UTC. */
export function parseProposal(text: string, now: number): Proposal {
  const line = LINE.exec(text)
  if (!line) refuse('not a proposal')
  const [, claim, by, category] = line
  if (claim.length > 500) refuse('the claim is over 500 characters')
  if (category.length > 64) refuse('the category is over 64 characters')
  const [y, m, d] = by.split('-').map(Number)
  if (!isCalendarDay(y, m, d)) refuse(`${by} is not a calendar date`)
  const today = chicagoDay(now)
  if (by <= today) refuse(`the date ${by} is not in the future (today is ${today} in ${MARKET_ZONE})`)
  // the end of the day is the next day's midnight, reckoned in numbers: the next day of 9999-12-31 has a five-digit year
  const closes_at = midnightOf(y, m, d + 1)
  // 9999-12-30 ends at 9999-12-31T06:00Z; 9999-12-31 ends in the year 10000 in UTC
  if (isoInstant(closes_at) === null)
    refuse(
      `the date ${by} would close at ${new Date(closes_at).toISOString()}, past the year 9999 in UTC, which a date-time cannot name (the last date a market can close on is 9999-12-30)`,
    )
  return { claim, by, category: category.toLowerCase(), closes_at }
}
