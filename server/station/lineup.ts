// What plays next: the tracks picked and not yet on air, in the order they will play, after the picks
// that have left it. The no-repeat window and the waits (engine/station/selection.ts) are counted on
// `order()`, the plays as they will be heard: a request that goes before tracks already picked counts
// where it plays. Counted where it was asked for (at the end), the window missed the track picked
// last, and with a window of one the next pick could be that track again, to follow itself (a CI run
// of 2026-11-28 heard a skip fade one track into itself).
import type { PickedBy, Track } from '../../engine/contracts/station.js'

/** Picks kept in the past: the waits that decide (a pool track is due after twice the pool's size of
 * picks) are exact for a pool of up to 5,000 tracks, and a pick's cost (each track's last play looked up
 * in it) stays bounded on a station that runs for months (some 500 picks a day). */
export const PAST_KEPT = 10_000

/** A track picked to play, and what picked it. */
export interface Planned {
  track: Track
  by: PickedBy
}

export class Lineup {
  /** picks that have left the lineup (gone on air, or failed to load), oldest first */
  private readonly past: string[] = []
  private readonly ahead: Planned[] = []

  get length(): number {
    return this.ahead.length
  }

  get first(): Planned | undefined {
    return this.ahead[0]
  }

  get last(): Planned | undefined {
    return this.ahead.at(-1)
  }

  /** the requests still to play, in order */
  requests(): Track[] {
    return this.ahead.filter((p) => p.by === 'request').map((p) => p.track)
  }

  /** every pick by id, in the order it played or will play */
  order(): string[] {
    return [...this.past, ...this.ahead.map((p) => p.track.id)]
  }

  /** `p`'s place in the lineup, from 1 (0: no longer in it). */
  placeOf(p: Planned): number {
    return this.ahead.indexOf(p) + 1
  }

  /** A pick joins the end. */
  push(p: Planned): void {
    this.ahead.push(p)
  }

  /** A request joins after the requests before it (and after the first, when `keepFirst`: the track
   * already fading in). The track picked for that place already becomes the request, rather than
   * play twice in a row. */
  request(p: Planned, keepFirst: boolean): void {
    let at = keepFirst && this.ahead.length > 0 ? 1 : 0
    while (at < this.ahead.length && this.ahead[at].by === 'request') at++
    this.ahead.splice(at, this.ahead[at]?.track.id === p.track.id ? 1 : 0, p)
  }

  /** `p` has gone on air or could not be played: it leaves the lineup for the past. */
  leave(p: Planned): void {
    const i = this.ahead.indexOf(p)
    if (i >= 0) this.ahead.splice(i, 1)
    this.past.push(p.track.id)
    if (this.past.length > PAST_KEPT) this.past.splice(0, this.past.length - PAST_KEPT)
  }

  /** Tracks no longer in the library leave, but for `keep` (cued, its audio already loaded). */
  keepOnly(ids: ReadonlySet<string>, keep: Planned | undefined): void {
    for (let i = this.ahead.length - 1; i >= 0; i--) if (!ids.has(this.ahead[i].track.id) && this.ahead[i] !== keep) this.ahead.splice(i, 1)
  }
}
