// The station's own MP3 stream: every listener of /stream gets the same encoded bytes, with a short
// burst on connect so playback starts at once, and ICY metadata for clients that ask for it.
import { PassThrough } from 'node:stream'

/** Bytes of audio between two ICY metadata blocks (half a second at 128 kbps). */
export const ICY_METAINT = 8192
/** What a new listener gets at once (Icecast's default burst is 64 KB; 2 s here). */
const BURST_BYTES = 32 * 1024
/** A listener further behind than this (a stalled socket) is dropped rather than buffered for. */
const MAX_BEHIND_BYTES = 4 * 1024 * 1024

/** One ICY metadata block: a length byte (in 16-byte units), then `StreamTitle='...';` zero-padded.
 * The title is cut (on a UTF-8 boundary) to fit the 4,080 bytes a block can hold. */
export function icyBlock(title: string | null): Buffer {
  if (title === null) return Buffer.from([0])
  let text = Buffer.from(`StreamTitle='${title}';`, 'utf8')
  while (text.length > 255 * 16) (title = title.slice(0, -1)), (text = Buffer.from(`StreamTitle='${title}';`, 'utf8'))
  const units = Math.ceil(text.length / 16)
  const block = Buffer.alloc(1 + units * 16)
  block[0] = units
  text.copy(block, 1)
  return block
}

const KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
const RATES = [44100, 48000, 32000]

/** Where the first whole MPEG-1 Layer III frame in `b` starts (a header whose next frame's header
 * follows where its length says, so a stray 0xFFF in audio data is not taken for one), or -1. */
export function firstFrame(b: Buffer): number {
  for (let i = 0; i + 4 <= b.length; i++) {
    if (b[i] !== 0xff || (b[i + 1] & 0xfe) !== 0xfa) continue
    const kbps = KBPS[b[i + 2] >> 4]
    const rate = RATES[(b[i + 2] >> 2) & 3]
    if (!kbps || !rate) continue
    const next = i + Math.floor((144_000 * kbps) / rate) + ((b[i + 2] >> 1) & 1)
    if (next + 1 < b.length && b[next] === 0xff && (b[next + 1] & 0xfe) === 0xfa) return i
  }
  return -1
}

class Listener {
  readonly out = new PassThrough()
  private untilMeta = ICY_METAINT
  private sentTitle: string | null = null

  constructor(
    readonly icy: boolean,
    readonly counted: boolean,
  ) {}

  /** Writes audio, with a metadata block every ICY_METAINT bytes (the title only when it changed). */
  write(chunk: Buffer, title: string): void {
    if (!this.icy) return void this.out.write(chunk)
    let at = 0
    while (at < chunk.length) {
      const n = Math.min(this.untilMeta, chunk.length - at)
      this.out.write(chunk.subarray(at, at + n))
      at += n
      this.untilMeta -= n
      if (this.untilMeta === 0) {
        this.out.write(icyBlock(title === this.sentTitle ? null : title))
        this.sentTitle = title
        this.untilMeta = ICY_METAINT
      }
    }
  }
}

export class Broadcast {
  private readonly listeners = new Set<Listener>()
  private readonly recent: Buffer[] = []
  private recentBytes = 0
  private current = ''
  private readonly titleWatchers: ((title: string) => void)[] = []

  /** People listening to /stream: the Icecast relay takes the stream as a listener does, but is not one. */
  get count(): number {
    let n = 0
    for (const l of this.listeners) if (l.counted) n++
    return n
  }

  get title(): string {
    return this.current
  }

  setTitle(title: string): void {
    this.current = title
    for (const w of this.titleWatchers) w(title)
  }

  /** Called with each new title (the Icecast source forwards them). */
  onTitle(watch: (title: string) => void): void {
    this.titleWatchers.push(watch)
  }

  /** A new listener's stream: the burst of recent audio from its first whole frame (the encoder's
   * output does not end on frame boundaries, and a decoder that starts mid-frame loses two frames),
   * then everything as it is encoded. A relay (`counted` false) is not counted as a listener. */
  listen(icy: boolean, counted = true): PassThrough {
    const l = new Listener(icy, counted)
    this.listeners.add(l)
    const drop = () => this.listeners.delete(l)
    l.out.on('close', drop)
    l.out.on('error', drop)
    const burst = Buffer.concat(this.recent)
    l.write(burst.subarray(Math.max(0, firstFrame(burst))), this.current)
    return l.out
  }

  send(bytes: Uint8Array): void {
    if (bytes.length === 0) return
    const chunk = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.recent.push(chunk)
    this.recentBytes += chunk.length
    while (this.recentBytes - this.recent[0].length >= BURST_BYTES) this.recentBytes -= this.recent.shift()!.length
    for (const l of this.listeners) {
      if (l.out.writableLength > MAX_BEHIND_BYTES) {
        l.out.destroy()
        continue
      }
      l.write(chunk, this.current)
    }
  }

  close(): void {
    for (const l of this.listeners) l.out.end()
    this.listeners.clear()
  }
}
