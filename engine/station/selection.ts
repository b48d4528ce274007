// Which track plays next, by the rules that hold whatever the resonance says: never one played within
// the no-repeat window, and within the block's BPM band when any such track is left.
import type { Track } from '../contracts/station.js'
import type { Block } from './schedule.js'

export interface Pick {
  track: Track
  /** false when no fresh track was in the band and the nearest tempo was taken instead */
  in_band: boolean
}

/** How far a tempo lies outside the band (0 inside it; unknown tempi count as inside until
 * perception measures them). */
export function bandDistance(bpm: number | null, band: Block['bpm']): number {
  if (bpm === null) return 0
  return bpm < band.min ? band.min - bpm : bpm > band.max ? bpm - band.max : 0
}

/** The next track: among those not played in the last `noRepeat` picks, the ones in (or nearest to)
 * the block's band; among those, the least recently played (library order breaks ties). Resonance
 * with the block's mood is to rank this set; until it does, recency does. */
export function pickNext(tracks: readonly Track[], block: Block, history: readonly string[], noRepeat: number): Pick {
  if (tracks.length === 0) throw new Error('no tracks to pick from')
  const recent = new Set(history.slice(-Math.min(noRepeat, tracks.length - 1)))
  const fresh = tracks.filter((t) => !recent.has(t.id))
  const nearest = Math.min(...fresh.map((t) => bandDistance(t.bpm, block.bpm)))
  const pool = fresh.filter((t) => bandDistance(t.bpm, block.bpm) === nearest)
  const last = (t: Track) => history.lastIndexOf(t.id)
  const track = pool.reduce((best, t) => (last(t) < last(best) ? t : best))
  return { track, in_band: nearest === 0 }
}
