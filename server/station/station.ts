// The station: picks tracks from the library, decodes and normalises each (-16 LUFS, true peak
// <= -1 dBTP), mixes them with crossfades and runs one MP3 encoder paced by the clock into the broadcast.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { streamTitle, type OnAir, type StationStatus, type Track } from '../../engine/contracts/station.js'
import { decodeMp3, FRAME, RATE, StreamEncoder, trimSilence } from './audio.js'
import { CrystalError } from '../../engine/errors.js'
import { scanLibrary, type Library } from './library.js'
import { applyGain, normalisingGain, type Normalisation } from './loudness.js'
import { Mixer, type Deck } from './mixer.js'
import { Broadcast } from './stream.js'

export interface StationOptions {
  library: Library
  /** crossfade length in seconds (default 4) */
  crossfade_s?: number
  /** audio seconds per wall-clock second: 1 on air; tests and the benchmark run faster */
  pace?: number
  /** how far the encoder runs ahead of the clock, in seconds of audio (default 0.5) */
  lead_s?: number
  /** tracks played within this many picks are not picked again (default: half the library) */
  no_repeat?: number
  say?: (line: string) => void
}

interface Loaded extends Normalisation {
  track: Track
}

/** The interim order until resonant selection lands: the least recently played track, in library order. */
export function leastRecent(tracks: readonly Track[], history: readonly string[], noRepeat: number): Track {
  const recent = new Set(history.slice(-noRepeat))
  const fresh = tracks.filter((t) => !recent.has(t.id))
  const pool = fresh.length ? fresh : tracks
  const last = (t: Track) => history.lastIndexOf(t.id)
  return pool.reduce((best, t) => (last(t) < last(best) ? t : best))
}

export class Station {
  readonly broadcast = new Broadcast()
  private readonly encoder = new StreamEncoder()
  private readonly mixer: Mixer<Loaded>
  private readonly pace: number
  private readonly lead: number
  private readonly noRepeat: number
  private readonly say: (line: string) => void
  private readonly history: string[] = []
  private onAir: OnAir | null = null
  private upNext: Track | null = null
  private timer: NodeJS.Timeout | undefined
  private t0 = 0
  private produced = 0
  /** frames that had to be silence because no track was ready */
  underruns = 0
  /** tracks that could not be played (their reasons went to `say`) */
  failed = 0

  constructor(private readonly o: StationOptions) {
    this.pace = o.pace ?? 1
    this.lead = o.lead_s ?? 0.5
    this.noRepeat = o.no_repeat ?? Math.floor(o.library.tracks.length / 2)
    this.say = o.say ?? (() => {})
    this.mixer = new Mixer<Loaded>(Math.round((o.crossfade_s ?? 4) * RATE), {
      want: () => void this.loadNext(),
      onAir: (l) => {
        this.onAir = { track: l.track, started_at: new Date().toISOString(), gain_db: l.gain_db, lufs_before: l.lufs_before, peak_limited: l.peak_limited }
        this.broadcast.setTitle(streamTitle(l.track))
        if (this.upNext?.id === l.track.id) this.upNext = null
      },
      underrun: () => this.underruns++,
    })
  }

  /** Loads the first track, then keeps the encoder `lead_s` ahead of the clock. */
  async start(): Promise<void> {
    await this.loadNext()
    this.t0 = performance.now()
    this.tick()
  }

  stop(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.broadcast.close()
  }

  status(): StationStatus {
    return { on_air: this.onAir, up_next: this.upNext, listeners: this.broadcast.count, underruns: this.underruns, library: { tracks: this.o.library.tracks.length, skipped: this.o.library.skipped.length } }
  }

  /** Encodes what the clock asks for (a bounded amount per turn, so requests still get answered). */
  private tick(): void {
    const due = ((performance.now() - this.t0) / 1000) * this.pace + this.lead
    for (let frames = 0; this.produced / RATE < due && frames < 64; frames++) {
      const { left, right } = this.mixer.frame()
      this.broadcast.send(this.encoder.encode(left, right))
      this.produced += FRAME
    }
    this.timer = setTimeout(() => this.tick(), 10)
  }

  /** Picks, decodes, trims and normalises the next track and cues it; a track that fails is
   * reported and another is tried, so a corrupt file costs no air time. */
  private async loadNext(): Promise<void> {
    const tracks = this.o.library.tracks
    for (let attempt = 0; attempt < Math.min(tracks.length, 8); attempt++) {
      const track = leastRecent(tracks, this.history, this.noRepeat)
      this.history.push(track.id)
      this.upNext = track
      try {
        const pcm = trimSilence(await decodeMp3(await readFile(join(this.o.library.dir, track.id)), track.id))
        if (pcm.left.length < RATE) throw new Error('shorter than one second after trimming its silence')
        const channels = [pcm.left.slice(), pcm.right.slice()]
        const gain = normalisingGain(channels, RATE)
        applyGain(channels, gain.gain_db)
        const deck: Deck<Loaded> = { item: { track, ...gain }, pcm: { left: channels[0], right: channels[1] } }
        this.mixer.cue(deck)
        return
      } catch (e) {
        this.failed++
        this.say(`station: skipping ${track.id}: ${(e as Error).message}`)
      }
    }
    this.say('station: no playable track found in 8 attempts; retrying in 5 s')
    setTimeout(() => void this.loadNext(), 5000).unref()
  }
}

export interface StationConfig {
  dir: string
  pace?: number
  crossfade_s?: number
}

/** Where the station's settings come from: `--music DIR`, else SVC_STATION_MUSIC, else ./music when it
 * exists (otherwise no station). SVC_STATION_PACE runs the clock faster (tests, benchmarks) and
 * SVC_STATION_CROSSFADE_S sets the crossfade. */
export function stationConfig(flag: string | undefined, env: Record<string, string | undefined>, cwd: string): StationConfig | undefined {
  const dir = flag || env.SVC_STATION_MUSIC || (existsSync(join(cwd, 'music')) ? join(cwd, 'music') : undefined)
  if (!dir) return undefined
  const number = (name: string) => {
    const v = env[name]
    if (v === undefined || v === '') return undefined
    const n = Number(v)
    if (!Number.isFinite(n) || n <= 0) throw new CrystalError('bad_argument', `${name} must be a positive number, got ${v}`, { field: name })
    return n
  }
  return { dir, pace: number('SVC_STATION_PACE'), crossfade_s: number('SVC_STATION_CROSSFADE_S') }
}

/** Scans the library and puts the station on air. */
export async function openStation(c: StationConfig, say: (line: string) => void): Promise<Station> {
  const library = await scanLibrary(c.dir)
  for (const s of library.skipped) say(`station: skipped ${s.file}: ${s.reason}`)
  const station = new Station({ library, pace: c.pace, crossfade_s: c.crossfade_s, say })
  await station.start()
  say(`station: ${library.tracks.length} tracks from ${c.dir} on air at /stream${c.pace && c.pace !== 1 ? ` (paced ${c.pace}x real time)` : ''}`)
  return station
}
