// PCM in and out of MP3 for the station: decode a file (mpg123-decoder, WASM) to 44.1 kHz stereo
// float, trim the silence at its ends, and one continuous MP3 encoder (@breezystack/lamejs).
import { Mp3Encoder } from '@breezystack/lamejs'
import { MPEGDecoder } from 'mpg123-decoder'
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

/** Decodes an MP3 to stereo PCM at the stream's rate. Corrupt frames are skipped by the decoder;
 * a file with no decodable audio, or at another rate, is a `bad_audio` error naming the file. */
export async function decodeMp3(bytes: Uint8Array, file: string): Promise<Pcm> {
  const decoder = new MPEGDecoder()
  await decoder.ready
  try {
    const left: Float32Array[] = []
    const right: Float32Array[] = []
    let rate = 0
    for (let at = 0; at < bytes.length; at += SLICE_BYTES) {
      const out = decoder.decode(bytes.subarray(at, at + SLICE_BYTES))
      if (out.samplesDecoded > 0) {
        rate = out.sampleRate
        left.push(out.channelData[0])
        right.push(out.channelData[1] ?? out.channelData[0])
      }
      await yieldToLoop()
    }
    if (left.length === 0) throw new CrystalError('bad_audio', `${file}: no MPEG audio could be decoded`, { file })
    // resampling is not built yet: every stream and demo track here is 44.1 kHz
    if (rate !== RATE) throw new CrystalError('bad_audio', `${file}: sample rate ${rate} Hz; the station plays ${RATE} Hz files`, { file })
    return { left: concat(left), right: concat(right) }
  } finally {
    decoder.free()
  }
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) out.set(p, (at += p.length) - p.length)
  return out
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
 * tracks (files joined as MP3 frames would leave gaps and lose their gapless tags). */
export class StreamEncoder {
  private readonly lame = new Mp3Encoder(2, RATE, BITRATE_KBPS)
  private readonly l = new Int16Array(FRAME)
  private readonly r = new Int16Array(FRAME)

  /** Encodes one frame of stereo float samples in [-1, 1] (clipped); returns the MP3 bytes ready. */
  encode(left: Float32Array, right: Float32Array): Uint8Array {
    for (let i = 0; i < left.length; i++) {
      this.l[i] = Math.max(-32768, Math.min(32767, Math.round(left[i] * 32767)))
      this.r[i] = Math.max(-32768, Math.min(32767, Math.round(right[i] * 32767)))
    }
    return bytes(this.lame.encodeBuffer(this.l.subarray(0, left.length), this.r.subarray(0, left.length)))
  }

  flush(): Uint8Array {
    return bytes(this.lame.flush())
  }
}

/** lamejs hands back signed bytes over its own working buffer: copy them out as bytes. */
function bytes(x: ArrayBufferView): Uint8Array {
  return new Uint8Array(x.buffer.slice(x.byteOffset, x.byteOffset + x.byteLength))
}
