// The station's blocks (mood, BPM band, the dream state in which the DJ may speak) and document 2's
// daily schedule in local time (America/Chicago unless set), by croner, which keeps wall-clock times
// across both DST changes.
import { Cron } from 'croner'
import { CrystalError } from '../errors.js'

/** The time zone the schedule is written in (SVC_STATION_TIME_ZONE sets another). */
export const TIME_ZONE = 'America/Chicago'

export type BlockName = 'Evening Signals' | 'Morning Drift' | 'Peace Oration' | 'News Teaser' | 'Gossip Column'
/** The medium's dream state (engine dream modes, and awake) in which the DJ may speak. */
export type DreamState = 'awake' | 'light' | 'deep'

export interface Block {
  name: BlockName
  /** the mood the next track should resonate with, each 0..1: energy, brightness (spectral
   * centroid), tension (minor keys, dissonance), warmth (low-mid weight) */
  mood: { energy: number; brightness: number; tension: number; warmth: number }
  /** tracks outside [min, max] BPM are not picked in this block */
  bpm: { min: number; max: number }
  speak_when: DreamState
}

/** The five blocks of document 2 (the values are this project's: the document leaves them out). */
export const BLOCKS: Record<BlockName, Block> = {
  'Morning Drift': {
    name: 'Morning Drift',
    mood: { energy: 0.35, brightness: 0.6, tension: 0.2, warmth: 0.7 },
    bpm: { min: 70, max: 112 },
    speak_when: 'awake',
  },
  'Evening Signals': {
    name: 'Evening Signals',
    mood: { energy: 0.7, brightness: 0.5, tension: 0.5, warmth: 0.4 },
    bpm: { min: 96, max: 140 },
    speak_when: 'light',
  },
  'Peace Oration': {
    name: 'Peace Oration',
    mood: { energy: 0.15, brightness: 0.3, tension: 0.05, warmth: 0.9 },
    bpm: { min: 60, max: 90 },
    speak_when: 'deep',
  },
  'News Teaser': {
    name: 'News Teaser',
    mood: { energy: 0.6, brightness: 0.8, tension: 0.4, warmth: 0.3 },
    bpm: { min: 100, max: 130 },
    speak_when: 'awake',
  },
  'Gossip Column': {
    name: 'Gossip Column',
    mood: { energy: 0.55, brightness: 0.7, tension: 0.3, warmth: 0.6 },
    bpm: { min: 90, max: 125 },
    speak_when: 'awake',
  },
}

export type ProgrammeKind = 'news_teaser' | 'gossip_column' | 'news_broadcast' | 'podcast' | 'peace_oration'

interface Slot {
  kind: ProgrammeKind
  /** cron pattern in local (America/Chicago) time */
  cron: string
  minutes: number
  /** the block that plays during the programme (the podcast's depends on the time of day) */
  block: BlockName | null
}

/** Document 2's daily schedule. Between programmes the music block is Morning Drift from 04:00 to
 * 15:59 local time and Evening Signals from 16:00 to 03:59. */
export const SLOTS: readonly Slot[] = [
  { kind: 'news_teaser', cron: '30 * * * *', minutes: 2, block: 'News Teaser' },
  { kind: 'gossip_column', cron: '20 4,16 * * *', minutes: 10, block: 'Gossip Column' },
  { kind: 'news_broadcast', cron: '0 7,17 * * *', minutes: 10, block: 'News Teaser' },
  { kind: 'podcast', cron: '0 10,22 * * *', minutes: 30, block: null },
  { kind: 'peace_oration', cron: '0 0,12 * * *', minutes: 10, block: 'Peace Oration' },
]

/** The daily podcast rotates by weekday (local), Sunday first. */
export const PODCASTS = [
  'Sunday Long Read',
  'Monday Lattice',
  'Tuesday Field Notes',
  'Wednesday Echoes',
  'Thursday Signals',
  'Friday Resonance',
  'Saturday Archive',
] as const

/** The slots' crons and the local-time format of one time zone, made once per zone. */
const zones = new Map<string, { crons: Cron[]; parts: Intl.DateTimeFormat }>()
function zone(timeZone: string): { crons: Cron[]; parts: Intl.DateTimeFormat } {
  let z = zones.get(timeZone)
  if (!z) {
    z = {
      crons: SLOTS.map((s) => new Cron(s.cron, { timezone: timeZone, paused: true })),
      parts: new Intl.DateTimeFormat('en-US', { timeZone, hour: 'numeric', hourCycle: 'h23', weekday: 'short' }),
    }
    zones.set(timeZone, z)
  }
  return z
}
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']

/** Checks an IANA time zone name (`field` names the setting in the error). */
export function checkTimeZone(timeZone: string, field = 'SVC_STATION_TIME_ZONE'): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone })
  } catch {
    throw new CrystalError(
      'bad_argument',
      `${field} is not a time zone: "${timeZone}" (expected an IANA name such as America/Chicago or Europe/Berlin)`,
      { field },
    )
  }
  return timeZone
}

/** Local hour (0..23) and weekday (0 = Sunday) in `timeZone`. */
export function localTime(at: Date, timeZone = TIME_ZONE): { hour: number; weekday: number } {
  const parts = zone(timeZone).parts.formatToParts(at)
  return {
    hour: Number(parts.find((p) => p.type === 'hour')!.value),
    weekday: WEEKDAYS.indexOf(parts.find((p) => p.type === 'weekday')!.value),
  }
}

export interface OnSchedule {
  /** null between programmes (music) */
  programme: { kind: ProgrammeKind; title: string; started_at: Date; ends_at: Date } | null
  block: Block
}

const musicBlock = (at: Date, timeZone: string): Block => {
  const { hour } = localTime(at, timeZone)
  return BLOCKS[hour >= 4 && hour < 16 ? 'Morning Drift' : 'Evening Signals']
}

const title = (kind: ProgrammeKind, at: Date, timeZone: string): string =>
  kind === 'podcast'
    ? PODCASTS[localTime(at, timeZone).weekday]
    : { news_teaser: 'News Teaser', gossip_column: 'Gossip Column', news_broadcast: 'News', peace_oration: 'Peace Oration' }[kind]

/** What is on at `at` (the schedule read in `timeZone`): the programme whose slot started last and
 * has not ended, else music. */
export function scheduleAt(at: Date, timeZone = TIME_ZONE): OnSchedule {
  const { crons } = zone(timeZone)
  let best: OnSchedule['programme'] = null
  let bestSlot: Slot | undefined
  SLOTS.forEach((slot, i) => {
    const [start] = crons[i].previousRuns(1, new Date(at.getTime() + 1))
    if (!start || at.getTime() >= start.getTime() + slot.minutes * 60_000) return
    if (!best || start > best.started_at) {
      best = {
        kind: slot.kind,
        title: title(slot.kind, start, timeZone),
        started_at: start,
        ends_at: new Date(start.getTime() + slot.minutes * 60_000),
      }
      bestSlot = slot
    }
  })
  const programme = best as OnSchedule['programme']
  return { programme, block: programme && bestSlot!.block ? BLOCKS[bestSlot!.block] : musicBlock(at, timeZone) }
}

/** The programme starts from `from` on (up to `count`), in time order. */
export function upcoming(from: Date, count: number, timeZone = TIME_ZONE): { kind: ProgrammeKind; title: string; at: Date }[] {
  const { crons } = zone(timeZone)
  // croner counts from strictly after the time it is given
  const since = new Date(from.getTime() - 1)
  return SLOTS.flatMap((slot, i) =>
    crons[i].nextRuns(count, since).map((at) => ({ kind: slot.kind, title: title(slot.kind, at, timeZone), at })),
  )
    .sort((a, b) => a.at.getTime() - b.at.getTime())
    .slice(0, count)
}
