// The station's perception of its library: each track decoded, normalised as it will sound on air and
// perceived (296 numbers) off the event loop, then standardised over the library and written into the medium.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { Track } from '../../engine/contracts/station.js'
import type { DreamMode } from '../../engine/contracts/registry.js'
import { createNodeEngine } from '../../engine/node.js'
import { MEDIUM_MATERIAL, MEDIUM_SIZE, StationMedium } from '../../engine/station/medium.js'
import { at, libraryStatistics, perceive, standardise } from '../../engine/station/perception.js'
import { scheduleAt, type Block } from '../../engine/station/schedule.js'
import { pickNext, type Pick } from '../../engine/station/selection.js'
import { CrystalError } from '../../engine/errors.js'
import { decodeMp3, RATE, trimSilence } from './audio.js'
import { level } from './loudness.js'

/** Perception listens to at most this much of a track, from its middle (as music retrieval's 30 s clips do, longer). */
export const PERCEIVE_SECONDS = 60
/** Perception starts this long after the station goes on air, so that the server's start and its
 * first listeners come first (the worker competes for the CPU on a small machine). */
export const PERCEIVE_AFTER_MS = 2000
/** The codebook's seed. */
export const CODEBOOK_SEED = 16

/** The perception vector of MP3 bytes: decoded, its silence trimmed, brought to the loudness it
 * plays at on air, mixed to mono, at most its middle PERCEIVE_SECONDS. */
export async function perceiveMp3(bytes: Uint8Array, name: string): Promise<Float64Array> {
  const pcm = trimSilence(await decodeMp3(bytes, name))
  const channels = [pcm.left.slice(), pcm.right.slice()]
  level(channels, RATE)
  const keep = Math.min(channels[0].length, PERCEIVE_SECONDS * RATE)
  const from = Math.floor((channels[0].length - keep) / 2)
  const mono = Float32Array.from({ length: keep }, (_, i) => (channels[0][from + i] + channels[1][from + i]) / 2)
  return perceive(mono, RATE)
}

/** A library track's perception vector. */
export async function perceiveFile(dir: string, id: string): Promise<Float64Array> {
  return perceiveMp3(await readFile(join(dir, id)), id)
}

/** The perception vector of an MP3 file, or of an MP3 stream URL listened to for `seconds` (or to its end).
 * What cannot be read or heard is a CrystalError naming the file or URL and why. */
export async function perceiveSource(source: string, seconds: number): Promise<Float64Array> {
  if (!/^https?:\/\//.test(source)) return perceiveMp3(await readSource(source), source)
  return perceiveMp3(await listenTo(source, seconds), source)
}

async function readSource(file: string): Promise<Buffer> {
  try {
    return await readFile(file)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new CrystalError('not_found', `${file}: no such file`, { file })
    if (code === 'EISDIR') throw new CrystalError('bad_audio', `${file} is a directory, not an MP3 file`, { file })
    throw new CrystalError('bad_audio', `cannot read ${file}: ${code ?? (e as Error).message}`, { file })
  }
}

/** Content types that are certainly not an MP3 stream (a page, a document, an API's answer). */
const NOT_AUDIO = /^(text\/|application\/([\w.-]+\+)?(json|xml)\b)/i

/** The bytes of an MP3 stream for `seconds` (or to its end, or until it stalls past the deadline). */
async function listenTo(url: string, seconds: number): Promise<Buffer> {
  const timeout = seconds * 1000 + 10_000
  const failed = (e: unknown, doing: string) => {
    if ((e as Error).name === 'TimeoutError')
      return new CrystalError('bad_audio', `${url}: no answer within ${timeout / 1000} s`, { file: url })
    const cause = (e as { cause?: { code?: string; message?: string } }).cause
    const why = cause?.code ?? cause?.message ?? (e as Error).message
    return new CrystalError(
      'not_found',
      `${url}: cannot ${doing} (${why})`,
      { file: url },
      'is a station serving there? `crystal serve --music DIR` starts one',
    )
  }
  const signal = AbortSignal.timeout(timeout)
  const res = await fetch(url, { signal }).catch((e) => {
    throw failed(e, 'connect')
  })
  if (!res.ok || !res.body) throw new CrystalError('bad_audio', `${url}: HTTP ${res.status}`, { file: url })
  const type = res.headers.get('content-type') ?? ''
  if (NOT_AUDIO.test(type)) {
    await res.body.cancel()
    throw new CrystalError('bad_audio', `${url} serves ${type.split(';')[0]}, not MP3 audio`, { file: url })
  }
  const parts: Uint8Array[] = []
  const until = Date.now() + seconds * 1000
  const reader = res.body.getReader()
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      parts.push(r.value)
      if (Date.now() >= until) break
    }
  } catch (e) {
    // a stream that stalls or drops after some audio: perceive what arrived
    if (parts.length === 0) throw failed(e, 'read from it')
  }
  await reader.cancel().catch(() => {})
  return Buffer.concat(parts)
}

/** `none`: fewer than two tracks could be perceived, so there is nothing to rank (the rules and recency pick). */
export type MediumState = 'perceiving' | 'none' | 'awake' | DreamMode

/**
 * The library's perception and the station's medium. Until every track is perceived (in a worker
 * thread) the rules and recency pick; then each pick is the medium's. Operations on the medium run
 * one at a time.
 */
export class LibraryPerception {
  readonly vectors = new Map<string, Float64Array>()
  /** each track's perception before standardisation (kept so a rescan perceives only what is new) */
  readonly raw = new Map<string, Float64Array>()
  medium: StationMedium | undefined
  private none = false
  private queue: Promise<unknown> = Promise.resolve()
  /** settles when the medium holds the library (or perception gave up) */
  readonly ready: Promise<void>

  private closed = false

  constructor(
    private readonly dir: string,
    private readonly tracks: Track[],
    private readonly say: (line: string) => void,
    /** the block on air now (the station's schedule, in its time zone) */
    private readonly blockNow: () => Block = () => scheduleAt(new Date()).block,
    /** perceptions already made (a rescan's unchanged tracks) */
    known: ReadonlyMap<string, Float64Array> = new Map(),
  ) {
    for (const t of tracks) if (known.has(t.id)) this.raw.set(t.id, known.get(t.id)!)
    this.ready = new Promise((wait) => setTimeout(wait, this.raw.size ? 0 : PERCEIVE_AFTER_MS).unref())
      .then(() => this.perceiveAll())
      .then(() => this.serial(() => this.build(this.raw)))
  }

  /** Frees the medium once the operations under way are done. */
  close(): void {
    this.closed = true
    void this.serial(() => this.medium?.engine.destroy())
  }

  get state(): MediumState {
    return this.medium ? (this.medium.dreamt ?? 'awake') : this.none ? 'none' : 'perceiving'
  }

  /** The next track (selection.ts's rules, then the medium's ranking; recency while perceiving),
   * `onAir` being the track on air now. */
  pick(block: Block, history: readonly string[], noRepeat: number, onAir: string | null): Promise<Pick> {
    return this.serial(async () => {
      if (!this.medium) return pickNext(this.tracks, block, history, noRepeat)
      await this.enter(block)
      return this.medium.next(this.tracks, block, history, noRepeat, this.vectors, onAir)
    })
  }

  /** The medium follows the block's dream state (the state in which its DJ may speak): a dreaming
   * block (light or deep) dreams it in that mode once; an awake block after a dream wakes it, the
   * library written afresh (so dreams do not pile up on one another and the sweep stays short). */
  private async enter(block: Block): Promise<void> {
    const m = this.medium!
    if (block.speak_when !== 'awake') {
      if (m.dreamt !== block.speak_when) await m.dream(block.speak_when)
    } else if (m.dreamt) await this.write()
  }

  private serial<T>(f: () => Promise<T> | T): Promise<T> {
    const run = this.queue.then(f)
    this.queue = run.catch(() => {})
    return run
  }

  /** Perceives every track not yet perceived in a worker (decoding and the spectra would hold up the
   * stream); a track that fails is named and left out of the medium. */
  private perceiveAll(): Promise<void> {
    const ids = this.tracks.map((t) => t.id).filter((id) => !this.raw.has(id))
    if (ids.length === 0) return Promise.resolve()
    return new Promise((resolve) => {
      const worker = new Worker(new URL('./perception_worker.js', import.meta.url), { workerData: { dir: this.dir, ids } })
      worker.unref()
      worker.on('message', (m: { id: string; vector: Float64Array } | { id: string; error: string }) => {
        if ('vector' in m) this.raw.set(m.id, m.vector)
        else this.say(`station: cannot perceive ${m.id}: ${m.error}`)
      })
      worker.on('error', (e) => this.say(`station: perception stopped: ${e.message}`))
      worker.on('exit', () => resolve())
    })
  }

  private async build(raw: Map<string, Float64Array>): Promise<void> {
    if (this.closed) return
    if (raw.size < 2) {
      this.none = true
      return this.say(`station: ${raw.size} track perceived; selection stays with the rules and recency`)
    }
    const stats = libraryStatistics([...raw.values()])
    for (const [id, v] of raw) this.vectors.set(id, standardise(v, stats))
    // a tempo the tags did not give, perception measured
    for (const t of this.tracks) if (t.bpm === null && raw.has(t.id)) t.bpm = Math.round(raw.get(t.id)![at('tempo')] * 10) / 10
    await this.write()
    await this.enter(this.blockNow())
    this.say(`station: ${this.medium!.traces.length} tracks perceived and written into the medium (${this.state})`)
  }

  /** Writes the library into a fresh medium, in library order. */
  private async write(): Promise<void> {
    const m = new StationMedium(
      await createNodeEngine({ size: MEDIUM_SIZE, material: MEDIUM_MATERIAL, backend: 'cpu', seed: CODEBOOK_SEED }),
      CODEBOOK_SEED,
    )
    for (const t of this.tracks) if (this.vectors.has(t.id)) await m.write(t.id, this.vectors.get(t.id)!)
    await m.echo()
    this.medium?.engine.destroy()
    this.medium = m
  }
}
