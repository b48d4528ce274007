// The field as the Observatory shows it (GET /crystal/state, the feed, a tab's own engine): one
// builder for the server's snapshot and for the tab, so both speak the same StateReply.
import type { BooksType, State } from '../contracts/api.js'
import { downsample } from '../util/downsample.js'
import type { Engine } from './engine.js'

/** Timeline points a state carries (the newest). */
export const STATE_TIMELINE_POINTS = 500

/** What a state is read from: the books and field of one moment (a snapshot, or the engine now). */
export interface FieldMoment {
  u: Float32Array
  books: BooksType
  timeline: readonly BooksType[]
}

/**
 * Field 0's moment now: the books are taken first and come back with the field's read (`booksLater`:
 * one read on the GPU, with any timeline samples waiting), and the timeline is read once they are in.
 */
export async function momentOf(e: Pick<Engine, 'booksLater' | 'readU' | 'timeline'>): Promise<FieldMoment> {
  const books = e.booksLater()
  const u = await e.readU([0])
  const [now] = await books()
  return { u, books: now, timeline: e.timeline(0).slice(-STATE_TIMELINE_POINTS) }
}

/** The state downsampled to `side` (capped at the field's own size); values to 5 decimals, enough for a picture. */
export function fieldState(
  e: Pick<Engine, 'size' | 'material' | 'temperature_k' | 'memories' | 'encoding'>,
  m: FieldMoment,
  side: number,
  backend: string,
): State {
  const s = Math.min(side, e.size)
  return {
    step: m.books.step,
    size: s,
    field_size: e.size,
    material: e.material.name,
    temperature_k: e.temperature_k,
    backend,
    memories: e.memories.length,
    encoding: e.encoding,
    field: Array.from(downsample(m.u, e.size, s), (v) => Math.round(v * 1e5) / 1e5),
    books: m.books,
    timeline: m.timeline.slice(-STATE_TIMELINE_POINTS),
  }
}
