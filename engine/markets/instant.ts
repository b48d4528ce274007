// The instants the markets take and give back (a close, a proposal's end of day): each must be
// writable as an RFC 3339 date-time, whose year has four digits, the `date-time` every reply promises.
import { CrystalError } from '../errors.js'

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: past either, toISOString writes a six-digit year (+010000-...). */
export const FIRST_INSTANT = -62_167_219_200_000
export const LAST_INSTANT = 253_402_300_799_999

/** The ms at UTC midnight of a day; month and day may overflow (day 32 is the next month's first). Date.UTC would read years 0-99 as 1900-1999. */
export function utcDay(y: number, m: number, d: number): number {
  const t = new Date(0)
  return t.setUTCFullYear(y, m - 1, d)
}

/** Whether y-m-d names a day on the (proleptic Gregorian) calendar: not 2026-02-30, not month 13. */
export function isCalendarDay(y: number, m: number, d: number): boolean {
  const t = new Date(utcDay(y, m, d))
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d
}

/** The instant as a date-time (2026-11-20T22:53:06.000Z), or null when its ISO form would not be one (a six-digit year, or no instant). */
export function isoInstant(ms: number): string | null {
  return ms >= FIRST_INSTANT && ms <= LAST_INSTANT ? new Date(ms).toISOString() : null
}

/**
 * Reads a date-time a caller sent, as epoch ms. Refuses (bad_argument, naming the field) a date that is
 * not on the calendar (Date.parse would carry 2026-02-30 over to 2 March) and an instant whose ISO
 * form is not a date-time: 9999-12-31T23:59:59-12:00 is in the year 10000 in UTC.
 */
export function parseInstant(text: string, field: string): number {
  const ms = Date.parse(text)
  const day = /^(\d{4})-(\d{2})-(\d{2})[Tt ]/.exec(text)
  if (Number.isNaN(ms) || !day) throw new CrystalError('bad_argument', `${field} ${text} is not a date-time`, { field })
  if (!isCalendarDay(Number(day[1]), Number(day[2]), Number(day[3])))
    throw new CrystalError('bad_argument', `${field} ${text}: ${day[0].slice(0, 10)} is not a calendar date`, { field })
  if (isoInstant(ms) === null)
    throw new CrystalError(
      'bad_argument',
      `${field} ${text} is ${new Date(ms).toISOString()} in UTC, outside the years 0000-9999 that a date-time can name`,
      { field },
    )
  return ms
}
