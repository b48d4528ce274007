// The station: picks tracks from the library, decodes and normalises each (-16 LUFS, true peak
// <= -1 dBTP), mixes them with crossfades (the DJ's voice over some) and runs one MP3 encoder paced by
// the clock into the broadcast; it hears the swarm on the bus for /api/state and the DJ.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ContractBus } from '../../engine/bus/contract_bus.js'
import type { StationSettings } from '../../engine/config.js'
import { DEFAULT_PERIOD_MS } from '../../engine/consciousness/publisher.js'
import { RADIO_SUBJECTS, streamTitle, type OnAir, type State, type StationStatus, type Track } from '../../engine/contracts/station.js'
import { decodeMp3, FRAME, RATE, StreamEncoder, trimSilence } from './audio.js'
import { scheduleAt } from '../../engine/station/schedule.js'
import { pickNext, type Pick as TrackPick } from '../../engine/station/selection.js'
import { scanLibrary, type Library } from './library.js'
import { applyGain, normalisingGain, type Normalisation } from './loudness.js'
import { AlertMonitor, type AlertOptions } from './alerts.js'
import { IcecastSource } from './icecast.js'
import { Mixer, type Deck, type MixEvents } from './mixer.js'
import { Broadcast } from './stream.js'
import { LibraryPerception } from './perception.js'
import { VoiceDj, type Utterance } from './dj.js'
import { SwarmWatch } from './swarm.js'

/** The watchdog's floor (-50 dBFS) and how long the output may stay under it. */
const SILENCE_FLOOR = 10 ** (-50 / 20)
export const WATCHDOG_S = 3
/** How long the encoder may wait for a loading track before it sends silence instead: a stopped
 * stream makes players give up, a short silence does not. */
const MAX_WAIT_MS = 2000

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
  /** the contract bus, when there is one: RADIO.nowplaying goes out on it, and the swarm's subjects
   * (QUEEN.phase.*, SVC.consciousness, SVC.dreams) come in */
  bus?: Pick<ContractBus, 'publish' | 'subscribe' | 'dropped'>
  /** how often the swarm's publishers publish (their values are stale after three periods) */
  swarm_period_ms?: number
  /** send the stream to Icecast as a source (SVC_ICECAST_URL) */
  icecast_url?: string
  icecast_poll_ms?: number
}

interface Loaded extends Normalisation {
  track: Track
}

export class Station {
  readonly broadcast = new Broadcast()
  private encoder: StreamEncoder | undefined
  private readonly mixer: Mixer<Loaded>
  private readonly pace: number
  private readonly lead: number
  private readonly noRepeat: number
  private readonly say: (line: string) => void
  private readonly history: string[] = []
  private onAir: OnAir | null = null
  private upNext: Track | null = null
  private timer: NodeJS.Timeout | undefined
  private icecast: IcecastSource | undefined
  private alerts: AlertMonitor | undefined
  /** the library's perception and the medium that ranks the next track (started once on air) */
  private perception: LibraryPerception | undefined
  private lastPick: TrackPick | undefined
  /** samples in a row the mix has sent below the watchdog's floor */
  private quiet = 0
  private t0 = 0
  private produced = 0
  /** frames that had to be silence because no track was ready */
  underruns = 0
  /** tracks that could not be played (their reasons went to `say`) */
  failed = 0
  /** times the silence watchdog cut a track short */
  watchdog_trips = 0
  /** wall-clock milliseconds the encoder waited for a track still loading (on a starved CPU) */
  waited_ms = 0
  private waitingSince: number | undefined
  readonly swarm: SwarmWatch
  readonly dj: VoiceDj
  /** the voice cued over the coming change, until it is on air */
  private spoken: Utterance | undefined

  constructor(private readonly o: StationOptions) {
    this.pace = o.pace ?? 1
    this.lead = o.lead_s ?? 0.5
    this.noRepeat = o.no_repeat ?? Math.floor(o.library.tracks.length / 2)
    this.say = o.say ?? (() => {})
    this.swarm = new SwarmWatch(o.bus, o.swarm_period_ms ?? DEFAULT_PERIOD_MS)
    this.dj = new VoiceDj(this.swarm, spawnSync('espeak-ng', ['--version']).status === 0)
    const events: MixEvents<Loaded> = {
      want: () => void this.loadNext(),
      onAir: (l) => {
        this.onAir = { track: l.track, started_at: new Date().toISOString(), gain_db: l.gain_db, lufs_before: l.lufs_before, peak_limited: l.peak_limited }
        this.broadcast.setTitle(streamTitle(l.track))
        if (this.upNext?.id === l.track.id) this.upNext = null
        if (o.bus) {
          const now = scheduleAt(new Date())
          o.bus.publish(RADIO_SUBJECTS.nowplaying, { track: l.track, block: now.block.name, programme: now.programme?.title ?? null, gain_db: l.gain_db, listeners: this.broadcast.count })
        }
      },
      underrun: () => this.underruns++,
      voiced: () => {
        if (!this.spoken) return
        this.dj.aired(this.spoken, scheduleAt(new Date()).block)
        this.say(`station: the DJ says "${this.spoken.text}" (${this.dj.last!.duration_s.toFixed(2)} s; order ${this.spoken.order.toFixed(2)}, the medium ${this.spoken.medium})`)
        this.spoken = undefined
      },
    }
    this.mixer = new Mixer<Loaded>(Math.round((o.crossfade_s ?? 4) * RATE), events)
  }

  /** Loads the first track, then keeps the encoder `lead_s` ahead of the clock. */
  async start(): Promise<void> {
    this.encoder = await StreamEncoder.create()
    await this.loadNext()
    this.t0 = performance.now()
    this.tick()
    this.perception = new LibraryPerception(this.o.library.dir, this.o.library.tracks, this.say)
    if (this.o.icecast_url) this.icecast = new IcecastSource(this.o.icecast_url, this.broadcast, { poll_ms: this.o.icecast_poll_ms, say: this.say })
  }

  /** Runs the alert monitor for as long as the station runs. */
  watchAlerts(monitor: AlertMonitor): void {
    this.alerts = monitor
    monitor.start()
  }

  stop(): void {
    this.swarm.stop()
    this.alerts?.stop()
    this.icecast?.stop()
    clearTimeout(this.timer)
    this.timer = undefined
    this.broadcast.close()
  }

  status(): StationStatus {
    const now = scheduleAt(new Date())
    return {
      selection: { medium: this.perception?.state ?? 'perceiving', traces: this.perception?.medium?.traces.length ?? 0, by: this.lastPick?.by ?? null, resonance: this.lastPick?.resonance ?? null },
      block: now.block.name,
      programme: now.programme && { kind: now.programme.kind, title: now.programme.title, started_at: now.programme.started_at.toISOString(), ends_at: now.programme.ends_at.toISOString() }, on_air: this.onAir, up_next: this.upNext, listeners: this.broadcast.count, icecast: this.icecast ? { ...this.icecast.status } : null, watchdog_trips: this.watchdog_trips, waited_ms: Math.round(this.waited_ms), underruns: this.underruns, library: { tracks: this.o.library.tracks.length, skipped: this.o.library.skipped.length } }
  }

  /** GET /api/state: the station, the swarm's fields, the DJ. */
  state(): State {
    return { station: this.status(), swarm: this.swarm.state(), dj: this.dj.status() }
  }

  /** Encodes what the clock asks for (a bounded amount per turn, so requests and the loading of
   * the next track get their turns). While the next track is still loading the encoder waits for it
   * (listeners play from their buffer) for up to MAX_WAIT_MS before it fills in silence. */
  private tick(): void {
    const now = performance.now()
    const due = ((now - this.t0) / 1000) * this.pace + this.lead
    for (let frames = 0; this.produced / RATE < due && frames < 16; frames++) {
      if (this.mixer.starved) {
        this.waitingSince ??= now
        if (now - this.waitingSince < MAX_WAIT_MS) break
      } else if (this.waitingSince !== undefined) {
        this.waited_ms += now - this.waitingSince
        this.waitingSince = undefined
      }
      const { left, right } = this.mixer.frame()
      this.watch(left, right)
      this.broadcast.send(this.encoder!.encode(left, right))
      this.produced += FRAME
    }
    this.timer = setTimeout(() => this.tick(), 10)
  }

  /** The silence watchdog: more than WATCHDOG_S of output below -50 dBFS (a track with a hole in it,
   * a stuck deck) and the mix moves on to the next track. */
  private watch(left: Float32Array, right: Float32Array): void {
    let loud = false
    for (let i = 0; i < left.length && !loud; i++) loud = Math.abs(left[i]) > SILENCE_FLOOR || Math.abs(right[i]) > SILENCE_FLOOR
    this.quiet = loud ? 0 : this.quiet + left.length
    if (this.quiet < WATCHDOG_S * RATE) return
    this.quiet = 0
    this.watchdog_trips++
    this.say(`station: ${WATCHDOG_S} s of silence on air; moving on from ${this.onAir?.track.id ?? 'nothing'}`)
    this.mixer.skip()
  }

  /** Picks, decodes, trims and normalises the next track and cues it; a track that fails is
   * reported and another is tried, so a corrupt file costs no air time. */
  private async loadNext(): Promise<void> {
    const tracks = this.o.library.tracks
    for (let attempt = 0; attempt < Math.min(tracks.length, 8); attempt++) {
      const block = scheduleAt(new Date()).block
      const pick = this.perception ? await this.perception.pick(block, this.history, this.noRepeat, this.history.at(-1) ?? null) : pickNext(tracks, block, this.history, this.noRepeat)
      const { track } = pick
      this.lastPick = pick
      this.history.push(track.id)
      this.upNext = track
      try {
        const pcm = trimSilence(await decodeMp3(await readFile(join(this.o.library.dir, track.id)), track.id))
        if (pcm.left.length < RATE) throw new Error('shorter than one second after trimming its silence')
        const channels = [pcm.left.slice(), pcm.right.slice()]
        const gain = normalisingGain(channels, RATE)
        applyGain(channels, gain.gain_db)
        const deck: Deck<Loaded> = { item: { track, ...gain }, pcm: { left: channels[0], right: channels[1] } }
        const from = this.onAir?.track ?? null
        this.mixer.cue(deck)
        if (from) void this.announce(from, deck.item)
        return
      } catch (e) {
        this.failed++
        this.say(`station: skipping ${track.id}: ${(e as Error).message}`)
      }
    }
    this.say('station: no playable track found in 8 attempts; retrying in 5 s')
    setTimeout(() => void this.loadNext(), 5000).unref()
  }

  /** Has the DJ speak over the change into `next` when the medium calls for it (dj.ts). */
  private async announce(from: Track, next: Loaded): Promise<void> {
    try {
      const u = await this.dj.utterance(from, next.track, scheduleAt(new Date()).block)
      if (!u) return
      if (this.mixer.voiceOver(u.pcm, next)) this.spoken = u
      else this.say(`station: the DJ was too late for the change into ${next.track.id}`)
    } catch (e) {
      this.say(`station: the DJ is silent: ${(e as Error).message}`)
    }
  }
}

export interface StationConfig {
  dir: string
  pace?: number
  crossfade_s?: number
  icecast_url?: string
  icecast_poll_ms?: number
  swarm_period_ms?: number
  alerts?: AlertOptions
}

/** The station's configuration: the library from `--music DIR`, else SVC_STATION_MUSIC, else ./music
 * when it exists (otherwise no station); the rest from the settings (engine/config.ts, docs/station.md). */
export function stationConfig(flag: string | undefined, s: StationSettings, cwd: string): StationConfig | undefined {
  const dir = flag || s.music || (existsSync(join(cwd, 'music')) ? join(cwd, 'music') : undefined)
  if (!dir) return undefined
  return { dir, pace: s.pace, crossfade_s: s.crossfade_s, icecast_url: s.icecast_url, icecast_poll_ms: s.icecast_poll_ms, swarm_period_ms: s.swarm_period_ms, alerts: s.alerts }
}

/** Scans the library and puts the station on air. */
export async function openStation(c: StationConfig, say: (line: string) => void, bus?: Pick<ContractBus, 'publish' | 'subscribe' | 'dropped'>): Promise<Station> {
  const library = await scanLibrary(c.dir)
  for (const s of library.skipped) say(`station: skipped ${s.file}: ${s.reason}`)
  const station = new Station({ library, ...c, say, bus })
  await station.start()
  if (bus) station.watchAlerts(new AlertMonitor(bus, c.alerts ?? {}))
  say(`station: ${library.tracks.length} tracks from ${c.dir} on air at /stream${c.pace && c.pace !== 1 ? ` (paced ${c.pace}x real time)` : ''}`)
  return station
}
