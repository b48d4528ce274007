// Which track plays next: the rules that hold whatever the resonance says (the block's pool: its BPM
// band, widened to the nearest tempi when it holds too few; never one played within the no-repeat
// window, sized to the pool; a pool track that has waited too long is due), then the medium's ranking.
import type { Track } from '../contracts/station.js'
import type { Block } from './schedule.js'

export interface Pick {
  track: Track
  /** false when the pick came from the nearest tempi that widened a small band */
  in_band: boolean
  /** what chose among the tracks the rules allow: the medium's resonance with the block's mood, its
   * co-resonance with the track on air (after a dream), or recency when no allowed track resonated
   * above the noise floor or a track was due */
  by: Ranking['by'] | 'recency'
  /** the winner's resonance, when it was chosen by it */
  resonance: number | null
}

/** The medium's reading of the tracks: only readings beyond its noise floor are in `scores`, above it
 * (resonant) or below minus it (opposed); a track whose reading lies within the noise is absent. */
export interface Ranking {
  by: 'mood' | 'cluster'
  scores: ReadonlyMap<string, number>
}

/** A pool smaller than this is widened with the nearest tempi: three is the least that leaves the
 * mood a choice of two (a window of one), where two would only alternate. */
export const MIN_POOL = 3
/** A pool track not played for this many times the pool's size of picks is due, whatever the mood
 * says, so every track of the block plays within that many picks. */
export const DUE_AFTER_POOLS = 2

/** How far a tempo lies outside the band (0 inside it; unknown tempi count as inside until
 * perception measures them). */
export function bandDistance(bpm: number | null, band: Block['bpm']): number {
  if (bpm === null) return 0
  return bpm < band.min ? band.min - bpm : bpm > band.max ? bpm - band.max : 0
}

/** The block's pool: the tracks in its band, and when that holds fewer than MIN_POOL, the nearest
 * tempi too (library order breaking ties), up to MIN_POOL or the whole library. */
export function blockPool(tracks: readonly Track[], block: Block): Track[] {
  const byDistance = tracks.map((t, i) => ({ t, i, d: bandDistance(t.bpm, block.bpm) })).sort((a, b) => a.d - b.d || a.i - b.i)
  const inBand = byDistance.filter((x) => x.d === 0).length
  return byDistance
    .slice(0, Math.max(inBand, Math.min(MIN_POOL, tracks.length)))
    .sort((a, b) => a.i - b.i)
    .map((x) => x.t)
}

/** The no-repeat window for a pool of `size`: half of it, so that at least half the pool is open to
 * the mood at every pick (`cap`, when given, holds it shorter). */
export const noRepeatWindow = (size: number, cap = Infinity): number => Math.max(0, Math.min(cap, Math.floor(size / 2)))

/** The next track. Of the block's pool, those not played in the last `noRepeatWindow(pool)` picks;
 * among them a track that has waited DUE_AFTER_POOLS x the pool's size picks (the longest waiting),
 * else the highest positive score in `ranking`, else the least recently played of those it does not
 * oppose (library order breaks ties).
 * `noRepeatCap` holds the window shorter than half the pool. */
export function pickNext(
  tracks: readonly Track[],
  block: Block,
  history: readonly string[],
  noRepeatCap = Infinity,
  ranking: Ranking = { by: 'mood', scores: new Map() },
): Pick {
  if (tracks.length === 0) throw new Error('no tracks to pick from')
  const pool = blockPool(tracks, block)
  const window = noRepeatWindow(pool.length, noRepeatCap)
  // slice(-0) would be the whole history: a window of 0 holds nothing
  const recent = new Set(window > 0 ? history.slice(-window) : [])
  const open = pool.filter((t) => !recent.has(t.id))
  const inBand = (t: Track) => bandDistance(t.bpm, block.bpm) === 0
  // picks since a track last played (never played: the whole history)
  const waited = (t: Track) => history.length - 1 - history.lastIndexOf(t.id)
  const leastRecent = (of: Track[]) => of.reduce((best, t) => (waited(t) > waited(best) ? t : best))
  if (open.some((t) => waited(t) >= DUE_AFTER_POOLS * pool.length)) {
    const track = leastRecent(open)
    return { track, in_band: inBand(track), by: 'recency', resonance: null }
  }
  const { scores } = ranking
  const resonant = open.filter((t) => (scores.get(t.id) ?? 0) > 0)
  if (resonant.length) {
    const track = resonant.reduce((best, t) => (scores.get(t.id)! > scores.get(best.id)! ? t : best))
    return { track, in_band: inBand(track), by: ranking.by, resonance: scores.get(track.id)! }
  }
  // nothing resonates: the least recently played of those the medium does not oppose (all, when it opposes every one)
  const neutral = open.filter((t) => !scores.has(t.id))
  const track = leastRecent(neutral.length ? neutral : open)
  return { track, in_band: inBand(track), by: 'recency', resonance: null }
}
