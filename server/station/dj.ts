// The voice DJ: when the medium's order parameter (SVC.consciousness) dips below a threshold and the
// medium is in the block's speak state, espeak-ng says what was on, what is next, the block and the
// top market's odds, resampled to the stream's rate and brought to the music's loudness (-16 LUFS).
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
  if (b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') throw new CrystalError('bad_audio', 'not a WAVE file')
  let at = 12
  let rate = 0
  let count = 0
  while (at + 8 <= b.length) {
    const id = b.toString('latin1', at, at + 4)
    const size = b.readUInt32LE(at + 4)
    if (id === 'fmt ') {
      if (b.readUInt16LE(at + 8) !== 1 || b.readUInt16LE(at + 22) !== 16) throw new CrystalError('bad_audio', 'only 16-bit PCM WAVE is read')
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
    p.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new CrystalError('voice_unavailable', `espeak-ng exited ${code}: ${err.trim()}`))))
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
  last: DjStatus['last'] = null

  /** The top market's odds; the routes set it to read the market engine's /api/markets. */
  topMarket: () => Promise<MarketOdds | null> = async () => null

  constructor(
    private readonly swarm: SwarmWatch,
    readonly enabled = true,
  ) {}

  /** Why the DJ stays quiet now, or null when it should speak in `block`. */
  quiet(block: Block): string | null {
    if (!this.enabled) return 'espeak-ng is not installed'
    const order = this.swarm.order()
    if (order === null) return 'no fresh SVC.consciousness'
    if (order >= DJ_ORDER_BELOW) return `order ${order.toFixed(2)} is not below ${DJ_ORDER_BELOW}`
    const medium = this.swarm.medium()
    if (medium !== block.speak_when) return `the medium is ${medium}, and ${block.name} speaks when it is ${block.speak_when}`
    return null
  }

  /** The words and the voice for the change from `from` to `next`, when the medium calls for them. */
  async utterance(from: Track | null, next: Track, block: Block): Promise<Utterance | null> {
    if (this.quiet(block) !== null) return null
    const order = this.swarm.order()!
    const medium = this.swarm.medium()!
    const text = script(from, next, block, await this.topMarket().catch(() => null))
    return { text, pcm: await voice(text), order, medium }
  }

  /** Called when an utterance goes on air. */
  aired(u: Utterance, block: Block): void {
    this.spoken++
    this.last = { text: u.text, at: new Date().toISOString(), duration_s: u.pcm.left.length / RATE, block: block.name, order: u.order, medium: u.medium }
  }

  status(): DjStatus {
    return { enabled: this.enabled, order_below: DJ_ORDER_BELOW, spoken: this.spoken, last: this.last }
  }
}
