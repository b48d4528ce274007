// The persisted medium behind `crystal write` and `crystal ask` (docs/recall.md): the field's state
// (u and u_prev), its step count and the memories written into it. Each write first ages the field by
// AGE_PER_WRITE steps, so time plays its part; asking runs the engine's own recall on the saved field.
// A medium keeps the text encoding its memories were written with, whatever encoding new media take.
import type { Engine, EngineOptions } from '../field/engine.js'
import type { RecallResult } from '../contracts/api.js'
import { ENCODING_VERSION, type EncodingVersion } from '../encode/text.js'

/** The file's format: 3 records the text encoding; a format-2 file is read as encoding 2 (docs/recall.md). */
export const MEDIUM_FORMAT = 'svc-crystal-medium/3'
/**
 * Steps the field runs before each write: the medium's clock. Writes one step apart or at one moment
 * could not be told apart by the field (they share a readout), so every write gets its own moment.
 */
export const AGE_PER_WRITE = 10

export interface MediumMemory {
  text: string
  importance: number
  step: number
}

export interface Medium {
  size: number
  material: string
  step_count: number
  memories: MediumMemory[]
  /** The text encoding of its memories: every write into it and every question asked of it use it. */
  encoding: EncodingVersion
  u: Float32Array
  prev: Float32Array
}

/** A new medium takes the encoding new fields use unless asked for an older one. */
export function emptyMedium(size: number, material: string, encoding: EncodingVersion = ENCODING_VERSION): Medium {
  return {
    size,
    material,
    step_count: 0,
    memories: [],
    encoding,
    u: new Float32Array(size * size),
    prev: new Float32Array(size * size),
  }
}

/** An engine holding the medium, at its material's own temperature and in the medium's encoding. */
export async function openMedium(m: Medium, open: (o: EngineOptions) => Promise<Engine>): Promise<Engine> {
  const e = await open({ size: m.size, material: m.material, timeline_interval: 0, encoding: m.encoding })
  await e.resume(m)
  return e
}

/** Ages the medium AGE_PER_WRITE steps before each text and writes it; the medium takes the new state. */
export async function writeTexts(
  m: Medium,
  items: readonly { text: string; importance: number }[],
  open: (o: EngineOptions) => Promise<Engine>,
): Promise<void> {
  const e = await openMedium(m, open)
  try {
    for (const { text, importance } of items) {
      await e.step(AGE_PER_WRITE)
      await e.write(text, importance)
    }
    const { u, prev } = await e.read()
    Object.assign(m, {
      u,
      prev,
      step_count: e.step_count,
      memories: e.memories.map(({ text, importance, step }) => ({ text, importance, step })),
    })
  } finally {
    e.destroy()
  }
}

/** The engine's recall on the medium as saved (docs/recall.md). */
export async function ask(m: Medium, text: string, k: number, open: (o: EngineOptions) => Promise<Engine>): Promise<RecallResult> {
  const e = await openMedium(m, open)
  try {
    return await e.recall(text, k)
  } finally {
    e.destroy()
  }
}
