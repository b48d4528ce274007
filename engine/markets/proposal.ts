// The proposal message of document 2: `propose: <claim> | by <YYYY-MM-DD> | category <topic>`.
// Dates are calendar days in America/Chicago; a market opened from one closes at the end of that day.
import { CrystalError } from '../errors.js'

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
  const guess = Date.UTC(y, m - 1, d)
  // the offset at the guess may be the neighbouring day's; a second pass settles it
  const first = guess - offsetAt(guess)
  return guess - offsetAt(first)
}

function validDay(day: string): boolean {
  const [y, m, d] = day.split('-').map(Number)
  const t = new Date(Date.UTC(y, m - 1, d))
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d
}

function refuse(detail: string): never {
  throw new CrystalError('bad_proposal', `${detail}; the format is: ${PROPOSAL_FORMAT}`, { field: 'text' }, PROPOSAL_FORMAT)
}

/** Parses a proposal, refusing (with the format) a malformed one or one whose day is not after today in Chicago. */
export function parseProposal(text: string, now: number): Proposal {
  const line = LINE.exec(text)
  if (!line) refuse('not a proposal')
  const [, claim, by, category] = line
  if (claim.length > 500) refuse('the claim is over 500 characters')
  if (category.length > 64) refuse('the category is over 64 characters')
  if (!validDay(by)) refuse(`${by} is not a calendar date`)
  const today = chicagoDay(now)
  if (by <= today) refuse(`the date ${by} is not in the future (today is ${today} in ${MARKET_ZONE})`)
  const [y, m, d] = by.split('-').map(Number)
  const next = new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10)
  return { claim, by, category: category.toLowerCase(), closes_at: chicagoMidnight(next) }
}
