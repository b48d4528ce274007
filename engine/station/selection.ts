// Which track plays next: the rules that hold whatever the resonance says (never one played within the
// no-repeat window; within the block's BPM band when any such track is left), then the medium's ranking.
import type { Track } from '../contracts/station.js'
import type { Block } from './schedule.js'

export interface Pick {
  track: Track
  /** false when no fresh track was in the band and the nearest tempo was taken instead */
  in_band: boolean
  /** what chose among the tracks the rules allow: the medium's resonance with the block's mood, its
   * co-resonance with the track on air (after a dream), or recency when no allowed track resonated
   * above the noise floor */
  by: Ranking['by'] | 'recency'
  /** the winner's resonance, when it was chosen by it */
  resonance: number | null
}

/** The medium's reading of the tracks (only those above its noise floor are in `scores`). */
export interface Ranking {
  by: 'mood' | 'cluster'
  scores: ReadonlyMap<string, number>
}

/** How far a tempo lies outside the band (0 inside it; unknown tempi count as inside until
 * perception measures them). */
export function bandDistance(bpm: number | null, band: Block['bpm']): number {
  if (bpm === null) return 0
  return bpm < band.min ? band.min - bpm : bpm > band.max ? bpm - band.max : 0
}

/** The next track: among those not played in the last `noRepeat` picks, the ones in (or nearest to)
 * the block's band; among those, the one with the highest score in `ranking`, else the least recently played (library
 * order breaks ties). */
export function pickNext(tracks: readonly Track[], block: Block, history: readonly string[], noRepeat: number, ranking: Ranking = { by: 'mood', scores: new Map() }): Pick {
  if (tracks.length === 0) throw new Error('no tracks to pick from')
  const window = Math.min(noRepeat, tracks.length - 1)
  // slice(-0) would be the whole history: a window of 0 holds nothing
  const recent = new Set(window > 0 ? history.slice(-window) : [])
  const fresh = tracks.filter((t) => !recent.has(t.id))
  const nearest = Math.min(...fresh.map((t) => bandDistance(t.bpm, block.bpm)))
  const pool = fresh.filter((t) => bandDistance(t.bpm, block.bpm) === nearest)
  const { scores } = ranking
  const resonant = pool.filter((t) => scores.has(t.id))
  if (resonant.length) {
    const track = resonant.reduce((best, t) => (scores.get(t.id)! > scores.get(best.id)! ? t : best))
    return { track, in_band: nearest === 0, by: ranking.by, resonance: scores.get(track.id)! }
  }
  const last = (t: Track) => history.lastIndexOf(t.id)
  const track = pool.reduce((best, t) => (last(t) < last(best) ? t : best))
  return { track, in_band: nearest === 0, by: 'recency', resonance: null }
}
