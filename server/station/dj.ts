// The voice DJ: when the medium's order parameter (SVC.consciousness) dips below a threshold and the
// medium is in the block's speak state, espeak-ng says what was on, what is next, the block and the
// top market's odds, resampled to the stream's rate and brought to the music's loudness (-16 LUFS);
// never sooner than a minimum interval after its last link, nor over its share of the airtime.
import { spawn } from 'node:child_process'
import type { DjStatus, Track } from '../../engine/contracts/station.js'
import type { Block } from '../../engine/station/schedule.js'
import { CrystalError } from '../../engine/errors.js'
import { RATE, resample, type Pcm } from './audio.js'
import { level } from './loudness.js'
import type { SwarmWatch } from './swarm.js'

/** Below this order parameter (0: incoherent, 1: in lockstep) the medium has lost its thread, and a
 * voice takes the listener across the change of track. */
export const DJ_ORDER_BELOW = 0.5
/** The voice used (espeak-ng -v) and its speed in words per minute (espeak's default is 175). */
const VOICE = 'en-us'
const WPM = 165

/** How often the DJ may speak (docs/station.md): SVC_STATION_DJ=off silences it; links are at least
 * `min_interval_s` of stream apart and its voice at most `max_share` of the stream's time so far. */
export interface DjSettings {
  off: boolean
  min_interval_s: number
  max_share: number
}

/** Five minutes between links at least, and at most a tenth of the airtime. */
export const DJ_DEFAULTS: DjSettings = { off: false, min_interval_s: 300, max_share: 0.1 }

/** The top market's question and its leading outcome's price, for the DJ to read out. */
export interface MarketOdds {
  question: string
  outcome: string
  price: number
}

export interface Utterance {
  text: string
  pcm: Pcm
  order: number
  medium: string
}

/** A RIFF WAVE file's 16-bit PCM as floats, with its rate (espeak-ng writes 22,050 Hz mono; on
 * stdout the data chunk's size is left unknown, so the data runs to the end). */
export function parseWav(b: Buffer): { rate: number; channels: Float32Array[] } {
  if (b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE')
    throw new CrystalError('bad_audio', 'not a WAVE file')
  let at = 12
  let rate = 0
  let count = 0
  while (at + 8 <= b.length) {
    const id = b.toString('latin1', at, at + 4)
    const size = b.readUInt32LE(at + 4)
    if (id === 'fmt ') {
      if (b.readUInt16LE(at + 8) !== 1 || b.readUInt16LE(at + 22) !== 16)
        throw new CrystalError('bad_audio', 'only 16-bit PCM WAVE is read')
      count = b.readUInt16LE(at + 10)
      rate = b.readUInt32LE(at + 12)
    } else if (id === 'data') {
      const data = b.subarray(at + 8, Math.min(b.length, at + 8 + size))
      const frames = Math.floor(data.length / (2 * count))
      const channels = Array.from({ length: count }, () => new Float32Array(frames))
      for (let i = 0; i < frames; i++) for (let c = 0; c < count; c++) channels[c][i] = data.readInt16LE(2 * (i * count + c)) / 32768
      return { rate, channels }
    }
    at += 8 + size + (size & 1)
  }
  throw new CrystalError('bad_audio', 'a WAVE file without data')
}

/** espeak-ng's WAVE output for `text` (text on stdin, so nothing in it is read as an option). */
export function speak(text: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const p = spawn('espeak-ng', ['--stdout', '-v', VOICE, '-s', String(WPM)], { stdio: ['pipe', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    let err = ''
    p.stdout.on('data', (d: Buffer) => out.push(d))
    p.stderr.on('data', (d: Buffer) => (err += d))
    p.on('error', (e) => reject(new CrystalError('voice_unavailable', `espeak-ng could not be run: ${e.message}`)))
    p.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(new CrystalError('voice_unavailable', `espeak-ng exited ${code}: ${err.trim()}`)),
    )
    p.stdin.end(text)
  })
}

/** The voice of `text` as the stream's stereo PCM at the music's -16 LUFS, its peaks held within
 * -1 dBTP by the limiter (by gain alone espeak's crests stopped it near -19 LUFS). */
export async function voice(text: string): Promise<Pcm> {
  const wav = parseWav(await speak(text))
  const [mono] = await resample([wav.channels[0]], wav.rate)
  const channels = [mono, mono.slice()]
  level(channels, RATE)
  return { left: channels[0], right: channels[1] }
}

/** What the DJ says over the change from `from` to `next`. */
export function script(from: Track | null, next: Track, block: Block, market: MarketOdds | null): string {
  const lines = [
    from ? `That was ${from.title} by ${from.artist}.` : '',
    `Next, ${next.title} by ${next.artist}.`,
    `This is ${block.name} on Resonant Crystal.`,
    market ? `On the markets: ${market.question} ${market.outcome}, at ${Math.round(market.price * 100)} percent.` : '',
  ]
  return lines.filter(Boolean).join(' ')
}

export class VoiceDj {
  spoken = 0
  /** seconds of voice aired, and the stream's time (s) when the last link began */
  spoken_s = 0
  private lastAt = -Infinity
  last: DjStatus['last'] = null
  /** why it did not speak over the last change (null: it spoke, or no change yet) */
  lastQuiet: string | null = null

  /** The top market's odds; the routes set it to read the market engine's /api/markets. */
  topMarket: () => Promise<MarketOdds | null> = async () => null

  constructor(
    private readonly swarm: SwarmWatch,
    /** false when espeak-ng is not installed */
    readonly installed = true,
    readonly settings: DjSettings = DJ_DEFAULTS,
    /** seconds of stream so far (the station's audio clock, so a paced stream counts its own time) */
    private readonly clock: () => number = () => performance.now() / 1000,
  ) {}

  get enabled(): boolean {
    return this.installed && !this.settings.off
  }

  /** Why the DJ stays quiet now, or null when it should speak in `block`. */
  quiet(block: Block): string | null {
    if (this.settings.off) return 'the DJ is off (SVC_STATION_DJ=off)'
    if (!this.installed) return 'espeak-ng is not installed'
    const since = this.clock() - this.lastAt
    if (since < this.settings.min_interval_s)
      return `the last link was ${since.toFixed(0)} s ago; links are at least ${this.settings.min_interval_s} s apart`
    if (this.spoken_s >= this.settings.max_share * this.clock())
      return `the voice has had ${(100 * this.share()).toFixed(1)}% of the airtime; at most ${100 * this.settings.max_share}%`
    const order = this.swarm.order()
    if (order === null) return 'no fresh SVC.consciousness'
    if (order >= DJ_ORDER_BELOW) return `order ${order.toFixed(2)} is not below ${DJ_ORDER_BELOW}`
    const medium = this.swarm.medium()
    if (medium !== block.speak_when) return `the medium is ${medium}, and ${block.name} speaks when it is ${block.speak_when}`
    return null
  }

  /** The words and the voice for the change from `from` to `next`, when the medium calls for them. */
  async utterance(from: Track | null, next: Track, block: Block): Promise<Utterance | null> {
    this.lastQuiet = this.quiet(block)
    if (this.lastQuiet !== null) return null
    const order = this.swarm.order()!
    const medium = this.swarm.medium()!
    const text = script(from, next, block, await this.topMarket().catch(() => null))
    const pcm = await voice(text)
    // the link must fit in the share with its own length counted
    const seconds = pcm.left.length / RATE
    if (this.spoken_s + seconds > this.settings.max_share * this.clock()) {
      this.lastQuiet = `a link of ${seconds.toFixed(1)} s would take the voice over ${100 * this.settings.max_share}% of the airtime`
      return null
    }
    return { text, pcm, order, medium }
  }

  /** The voice's share of the stream's time so far. */
  share(): number {
    const t = this.clock()
    return t > 0 ? this.spoken_s / t : 0
  }

  /** Called when an utterance goes on air. */
  aired(u: Utterance, block: Block): void {
    this.spoken++
    this.spoken_s += u.pcm.left.length / RATE
    this.lastAt = this.clock()
    this.last = {
      text: u.text,
      at: new Date().toISOString(),
      duration_s: u.pcm.left.length / RATE,
      block: block.name,
      order: u.order,
      medium: u.medium,
    }
  }

  status(): DjStatus {
    return {
      enabled: this.enabled,
      order_below: DJ_ORDER_BELOW,
      min_interval_s: this.settings.min_interval_s,
      max_share: this.settings.max_share,
      spoken: this.spoken,
      spoken_s: this.spoken_s,
      airtime_share: this.share(),
      quiet: this.lastQuiet,
      last: this.last,
    }
  }
}
