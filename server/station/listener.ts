// A listener of the station, as tests and the benchmark use it: reads an MP3 stream over HTTP (ICY
// titles parsed out), decodes what arrives, and measures it: silences, loudness per track, titles.
import { MPEGDecoder } from 'mpg123-decoder'
import { CrystalError } from '../../engine/errors.js'
import { RATE } from './audio.js'
import { integratedLoudness } from './loudness.js'
import { firstFrame } from './stream.js'

export interface Heard {
  left: Float32Array
  right: Float32Array
  /** each title as it arrived, at the sample where the listener's decoded audio stood */
  titles: { at: number; title: string }[]
  /** wall-clock milliseconds from the request to the first audio byte */
  first_byte_ms: number
  bytes: number
}

/** Parses ICY metadata (`icy-metaint` bytes of audio, a length byte in 16-byte units, the block). */
class IcyReader {
  private untilMeta: number
  private metaLeft = -1
  private meta: number[] = []

  constructor(
    private readonly metaint: number,
    private readonly audio: (b: Uint8Array) => void,
    private readonly title: (t: string) => void,
  ) {
    this.untilMeta = metaint
  }

  push(chunk: Uint8Array): void {
    let at = 0
    while (at < chunk.length) {
      if (this.metaLeft < 0 && this.untilMeta > 0) {
        const n = Math.min(this.untilMeta, chunk.length - at)
        this.audio(chunk.subarray(at, at + n))
        at += n
        this.untilMeta -= n
      } else if (this.metaLeft < 0) {
        this.metaLeft = chunk[at++] * 16
        this.meta = []
        if (this.metaLeft === 0) this.endBlock()
      } else {
        const n = Math.min(this.metaLeft, chunk.length - at)
        for (let i = 0; i < n; i++) this.meta.push(chunk[at + i])
        at += n
        this.metaLeft -= n
        if (this.metaLeft === 0) this.endBlock()
      }
    }
  }

  private endBlock(): void {
    const text = Buffer.from(this.meta).toString('utf8').replace(/\0+$/, '')
    const m = text.match(/StreamTitle='(.*?)';/s)
    if (m) this.title(m[1])
    this.metaLeft = -1
    this.untilMeta = this.metaint
  }
}

/** Bytes a listener takes without finding a frame before it gives up (4 s of the station's stream). */
const FIND_FRAME_WITHIN = 64 * 1024

/** An MP3 decoder for a stream joined at any byte, as a player joins Icecast (whose burst starts
 * wherever its buffer does): the bytes are held until the first whole frame (`firstFrame`), and
 * decoding starts there. Fed from mid-frame, mpg123 can take a stray 0xFFF in the audio data for a
 * header and put out up to 90 ms of silence after its start, which reads as a gap in the stream. */
export class JoinedDecoder {
  private readonly decoder = new MPEGDecoder()
  /** the bytes before the first whole frame is found (null once decoding has begun) */
  private held: Buffer | null = Buffer.alloc(0)
  readonly ready: Promise<void> = this.decoder.ready

  /** The samples `bytes` complete (none while the first frame is still being looked for). */
  decode(bytes: Uint8Array): { left: Float32Array; right: Float32Array; samples: number } {
    let from = bytes
    if (this.held) {
      const held = Buffer.concat([this.held, bytes])
      const at = firstFrame(held)
      if (at < 0) {
        if (held.length > FIND_FRAME_WITHIN)
          throw new CrystalError(
            'bad_audio',
            `no MPEG-1 Layer III frame in the first ${held.length} bytes: not an MP3 stream the station sends`,
          )
        this.held = held
        return { left: new Float32Array(0), right: new Float32Array(0), samples: 0 }
      }
      this.held = null
      from = held.subarray(at)
    }
    const out = this.decoder.decode(from)
    return { left: out.channelData[0], right: out.channelData[1] ?? out.channelData[0], samples: out.samplesDecoded }
  }

  free(): void {
    this.decoder.free()
  }
}

/** Listens to `url` until `seconds` of audio have been decoded (or `timeout_ms` passes). */
export async function listen(url: string, seconds: number, timeout_ms = 120_000): Promise<Heard> {
  const decoder = new JoinedDecoder()
  await decoder.ready
  const left: Float32Array[] = []
  const right: Float32Array[] = []
  let samples = 0
  const titles: Heard['titles'] = []
  const abort = new AbortController()
  const timer = setTimeout(() => abort.abort(), timeout_ms)
  const t0 = performance.now()
  let firstByte = -1
  let bytes = 0
  try {
    const res = await fetch(url, { headers: { 'Icy-MetaData': '1' }, signal: abort.signal })
    if (!res.ok || !res.body) throw new Error(`${url} answered ${res.status}`)
    const decode = (b: Uint8Array) => {
      const out = decoder.decode(b)
      if (out.samples === 0) return
      left.push(out.left)
      right.push(out.right)
      samples += out.samples
    }
    const metaint = Number(res.headers.get('icy-metaint') ?? 0)
    const reader = metaint > 0 ? new IcyReader(metaint, decode, (title) => titles.push({ at: samples, title })) : undefined
    const body = res.body.getReader()
    while (samples < seconds * RATE) {
      const { done, value } = await body.read()
      if (done) break
      if (firstByte < 0) firstByte = performance.now() - t0
      bytes += value.length
      reader ? reader.push(value) : decode(value)
    }
    await body.cancel()
  } catch (e) {
    if (!abort.signal.aborted) throw e
  } finally {
    clearTimeout(timer)
    abort.abort()
    decoder.free()
  }
  const join = (parts: Float32Array[]) => {
    const out = new Float32Array(samples)
    let at = 0
    for (const p of parts) out.set(p, (at += p.length) - p.length)
    return out
  }
  return { left: join(left), right: join(right), titles, first_byte_ms: firstByte, bytes }
}

/** A listener's first audio is not on air: a decoder that joins an MP3 stream at a frame loses the
 * first frame to the bit reservoir and adds its own delay (some 40 ms), and one that joins as the
 * station starts also hears the encoder's priming (at most 62 ms in all, listener.test.ts). Gaps
 * are counted from this far into what was heard. */
export const DECODER_START_MS = 100

/** The longest stretch below -50 dBFS on both channels after the decoder's start, in milliseconds:
 * dead air and gaps. */
export function longestSilenceMs(h: Pick<Heard, 'left' | 'right'>, floorDb = -50, fromMs = DECODER_START_MS): number {
  const floor = 10 ** (floorDb / 20)
  let run = 0
  let longest = 0
  for (let i = Math.round((fromMs / 1000) * RATE); i < h.left.length; i++) {
    if (Math.abs(h.left[i]) < floor && Math.abs(h.right[i]) < floor) longest = Math.max(longest, ++run)
    else run = 0
  }
  return (longest / RATE) * 1000
}

/** Loudness of each track heard whole or in part: the audio between two title changes, less
 * `margin_s` at each end (the crossfades), when at least 3 s are left to measure. */
export function loudnessPerTitle(h: Heard, margin_s: number): { title: string; lufs: number; seconds: number }[] {
  const out: { title: string; lufs: number; seconds: number }[] = []
  const margin = Math.round(margin_s * RATE)
  for (let i = 0; i < h.titles.length; i++) {
    const start = h.titles[i].at + margin
    const end = (i + 1 < h.titles.length ? h.titles[i + 1].at : h.left.length) - margin
    if (end - start < 3 * RATE) continue
    out.push({
      title: h.titles[i].title,
      lufs: integratedLoudness([h.left.subarray(start, end), h.right.subarray(start, end)], RATE),
      seconds: (end - start) / RATE,
    })
  }
  return out
}
