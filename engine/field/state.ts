// The field as the Observatory shows it (GET /crystal/state, the feed, a tab's own engine): one
// builder for the server's snapshot and for the tab, so both speak the same StateReply.
import type { BooksType, State } from '../contracts/api.js'
import type { Engine } from './engine.js'

/** Timeline points a state carries (the newest). */
export const STATE_TIMELINE_POINTS = 500

/** What a state is read from: the books, field and conditions of one moment (a snapshot, or the engine now). */
export interface FieldMoment {
  /** u averaged onto each side taken (Engine.downsampled); a side taken later is added where the field is still this moment's. */
  images: Map<number, Float32Array>
  books: BooksType
  timeline: readonly BooksType[]
  memories: number
  material: string
  temperature_k: number
}

/**
 * Field 0's moment now, its u averaged onto each of `sides` where the field lives (on the GPU one read
 * of side^2 floats, where the whole u came back): the books are taken first and come back with the first
 * such read (`booksLater`: with any timeline samples waiting), and the timeline is read once they are in.
 */
export async function momentOf(
  e: Pick<Engine, 'booksLater' | 'downsampled' | 'timeline' | 'memories' | 'material' | 'temperature_k'>,
  sides: readonly number[],
): Promise<FieldMoment> {
  const conditions = { memories: e.memories.length, material: e.material.name, temperature_k: e.temperature_k }
  const books = e.booksLater()
  const images = new Map<number, Float32Array>()
  for (const side of sides) images.set(side, await e.downsampled(side))
  const [now] = await books()
  return { images, books: now, timeline: e.timeline(0).slice(-STATE_TIMELINE_POINTS), ...conditions }
}

/** The state at `side` (capped at the field's own size), from the moment's image at that side; values to 5 decimals, enough for a picture. */
export function fieldState(e: Pick<Engine, 'size' | 'encoding'>, m: FieldMoment, side: number, backend: string): State {
  const s = Math.min(side, e.size)
  const image = m.images.get(s)
  if (!image) throw new Error(`the moment has no image at ${s} x ${s} (it has ${[...m.images.keys()].join(', ') || 'none'})`)
  return {
    step: m.books.step,
    size: s,
    field_size: e.size,
    material: m.material,
    temperature_k: m.temperature_k,
    backend,
    memories: m.memories,
    encoding: e.encoding,
    field: Array.from(image, (v) => Math.round(v * 1e5) / 1e5),
    books: m.books,
    timeline: m.timeline.slice(-STATE_TIMELINE_POINTS),
  }
}
