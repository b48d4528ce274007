// PCM in and out of MP3 for the station: decode a file (mpg123-decoder, WASM) to 44.1 kHz stereo
// float (resampled by libsamplerate when it is at another rate), trim the silence at its ends, and
// one continuous MP3 encoder (LAME compiled to WASM, wasm-media-encoders).
import { MPEGDecoder } from 'mpg123-decoder'
import { createMp3Encoder } from 'wasm-media-encoders'
import { CrystalError } from '../../engine/errors.js'

/** The stream's format: every track is brought to it before mixing. */
export const RATE = 44100
export const FRAME = 1152 // samples per MPEG-1 Layer III frame
export const BITRATE_KBPS = 128

export interface Pcm {
  left: Float32Array
  right: Float32Array
}

// decoding a whole album track takes tens of milliseconds of WASM per second of audio: do it in
// slices and let the event loop (the live stream) run between them
const SLICE_BYTES = 64 * 1024
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Decodes an MP3 to stereo PCM at the stream's rate (resampled when the file has another).
 * Corrupt frames are skipped by the decoder, and the near-silence it leaves where it lost them is cut
 * out (`spliceDropouts`); a file with no decodable audio is a `bad_audio` error naming the file. */
export async function decodeMp3(bytes: Uint8Array, file: string): Promise<Pcm> {
  const decoder = new MPEGDecoder()
  await decoder.ready
  try {
    const left: Float32Array[] = []
    const right: Float32Array[] = []
    let rate = 0
    for (let at = 0; at < bytes.length; at += SLICE_BYTES) {
      const out = quietly(() => decoder.decode(bytes.subarray(at, at + SLICE_BYTES)))
      if (out.samplesDecoded > 0) {
        rate = out.sampleRate
        const pcm = { left: out.channelData[0], right: out.channelData[1] ?? out.channelData[0] }
        const { left: l, right: r } = out.errors.length ? spliceDropouts(pcm, out.sampleRate) : pcm
        left.push(l)
        right.push(r)
      }
      await yieldToLoop()
    }
    if (left.length === 0) throw new CrystalError('bad_audio', `${file}: no MPEG audio could be decoded`, { file })
    const [l, r] = await resample([concat(left), concat(right)], rate)
    return { left: l, right: r }
  } finally {
    decoder.free()
  }
}

/** Runs `f` with console.error silenced: mpg123-decoder writes each decoding error there
 * ("mpg123-decoder: -1 MPG123_ERR", on bytes that are not MPEG audio) as well as returning it in
 * `errors`, which is where decodeMp3 reads it. `f` is synchronous, so nothing else's output is lost. */
function quietly<T>(f: () => T): T {
  const write = console.error
  console.error = () => {}
  try {
    return f()
  } finally {
    console.error = write
  }
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) out.set(p, (at += p.length) - p.length)
  return out
}

/** Brings each channel from `rate` to the stream's rate with libsamplerate (compiled from C to
 * JavaScript by Emscripten). Its fastest sinc converter passes 80% of the band (17.6 kHz at 44.1 kHz,
 * above the 128 kbps encoder's own low-pass) with 97 dB of rejection, some three times faster than
 * the medium one. A second of audio at a time, with the event loop's turn between, so the live
 * stream never waits on a long track. */
export async function resample(channels: Float32Array[], rate: number): Promise<Float32Array[]> {
  if (rate === RATE) return channels
  // loaded when first needed: its 2 MB of JavaScript would otherwise slow every start
  const { default: libsamplerate } = await import('@alexanderolsen/libsamplerate-js')
  const out: Float32Array[] = []
  for (const c of channels) {
    const src = await libsamplerate.create(1, rate, RATE, { converterType: libsamplerate.ConverterType.SRC_SINC_FASTEST })
    try {
      const parts: Float32Array[] = []
      for (let at = 0; at < c.length; at += rate) {
        parts.push(src.full(c.subarray(at, at + rate)).slice())
        await yieldToLoop()
      }
      // the converter holds back its filter's delay: zeros push the last samples out, then the
      // output is cut to the input's length at the new rate
      parts.push(src.full(new Float32Array(1024)).slice())
      out.push(concat(parts).subarray(0, Math.round((c.length * RATE) / rate)))
    } finally {
      src.destroy()
    }
  }
  return out
}

/** Where the decoder reported corrupt data, it leaves a stretch of near-silence (frames it could not
 * decode, and the next ones whose bit reservoir they held). Stretches below -50 dBFS longer than a
 * frame are cut out of such a slice, so a damaged file plays on without dead air; both edges are
 * that quiet, so the joins do not click. */
export function spliceDropouts(pcm: Pcm, rate: number): Pcm {
  const quiet = (i: number) => Math.abs(pcm.left[i]) < SILENCE && Math.abs(pcm.right[i]) < SILENCE
  const min = Math.round((FRAME * rate) / RATE)
  const keep: [number, number][] = []
  let from = 0
  for (let i = 0; i < pcm.left.length; ) {
    if (!quiet(i)) {
      i++
      continue
    }
    let end = i
    while (end < pcm.left.length && quiet(end)) end++
    if (end - i > min) keep.push([from, i]), (from = end)
    i = end
  }
  if (keep.length === 0) return pcm
  keep.push([from, pcm.left.length])
  const join = (x: Float32Array) => {
    const out = new Float32Array(keep.reduce((n, [a, b]) => n + b - a, 0))
    let at = 0
    for (const [a, b] of keep) out.set(x.subarray(a, b), at), (at += b - a)
    return out
  }
  return { left: join(pcm.left), right: join(pcm.right) }
}

/** Below this (-50 dBFS) a track's head or tail counts as silence: encoder delay and padding
 * (some 1,600 samples in a file without a gapless tag), and quiet lead-ins that would be dead air. */
const SILENCE = 10 ** (-50 / 20)

/** The track without the silence at its ends (cue points, as radio automation sets them). */
export function trimSilence(pcm: Pcm): Pcm {
  const loud = (i: number) => Math.abs(pcm.left[i]) > SILENCE || Math.abs(pcm.right[i]) > SILENCE
  let start = 0
  while (start < pcm.left.length && !loud(start)) start++
  let end = pcm.left.length
  while (end > start && !loud(end - 1)) end--
  return { left: pcm.left.subarray(start, end), right: pcm.right.subarray(start, end) }
}

/** One MP3 encoder for the whole stream, so that frames follow each other with no gap between
 * tracks (files joined as MP3 frames would leave gaps and lose their gapless tags). LAME in WASM:
 * some four times faster than the pure-JS lamejs (docs/station.md, `crystal bench station`). */
export class StreamEncoder {
  private readonly l = new Float32Array(FRAME)
  private readonly r = new Float32Array(FRAME)

  private constructor(private readonly lame: Awaited<ReturnType<typeof createMp3Encoder>>) {}

  static async create(): Promise<StreamEncoder> {
    const lame = await createMp3Encoder()
    lame.configure({ channels: 2, sampleRate: RATE, bitrate: BITRATE_KBPS, outputSampleRate: RATE })
    return new StreamEncoder(lame)
  }

  /** Encodes one frame of stereo float samples (clipped to [-1, 1]); returns the MP3 bytes ready. */
  encode(left: Float32Array, right: Float32Array): Uint8Array {
    for (let i = 0; i < left.length; i++) {
      this.l[i] = Math.max(-1, Math.min(1, left[i]))
      this.r[i] = Math.max(-1, Math.min(1, right[i]))
    }
    // the encoder owns the bytes it returns until its next call: copy them out
    return this.lame.encode([this.l.subarray(0, left.length), this.r.subarray(0, left.length)]).slice()
  }

  flush(): Uint8Array {
    return this.lame.finalize().slice()
  }
}
