// The test listener joins an MP3 stream wherever its bytes begin, as a player joins Icecast (whose
// burst starts where its buffer does, not at a frame): what it hears after the decoder's start has no
// gap the stream does not have. The control: mpg123 fed from the same bytes. CI once failed the
// Icecast test on 54 ms of silence that was the decoder's, not the station's.
// (The first 16 KB of the first demo track hold two stretches of such starts for mpg123 1.x.)
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MPEGDecoder } from 'mpg123-decoder'
import { expect, test } from 'vitest'
import { demoLibrary } from '../../testing/services.js'
import { DECODER_START_MS, JoinedDecoder, longestSilenceMs } from './listener.js'

/** half a second of audio at 128 kbps: the decoder's start and what follows it */
const HEARD_BYTES = 8_000

test('joined at any byte of a track, the listener hears no gap over 50 ms after its start; the bare decoder, fed the same bytes, does', async () => {
  const { dir, tracks } = await demoLibrary(14, 4)
  const t = tracks[0]
  const bytes = readFileSync(join(dir, t.artist, t.album, `01 ${t.title}.mp3`))
  let joined = 0
  let leading = 0
  let bare = 0
  for (let at = 0; at < 16_000; at += 13) {
    const part = bytes.subarray(at, at + HEARD_BYTES)
    const listener = new JoinedDecoder()
    await listener.ready
    const heard = listener.decode(part)
    listener.free()
    joined = Math.max(joined, longestSilenceMs(heard))
    leading = Math.max(leading, longestSilenceMs(heard, -50, 0))
    const decoder = new MPEGDecoder()
    await decoder.ready
    const out = decoder.decode(part)
    decoder.free()
    bare = Math.max(bare, longestSilenceMs({ left: out.channelData[0], right: out.channelData[1] }))
  }
  expect(joined).toBeLessThan(50)
  // what comes before DECODER_START_MS (the reservoir's frame, the decoder's delay, the track's start)
  expect(leading).toBeLessThan(DECODER_START_MS)
  expect(bare).toBeGreaterThan(50)
})

test('bytes with no MP3 frame in their first 64 KB are a clear error, not a listener waiting for ever', async () => {
  const listener = new JoinedDecoder()
  await listener.ready
  expect(listener.decode(new Uint8Array(60_000)).samples).toBe(0)
  expect(() => listener.decode(new Uint8Array(10_000))).toThrow(/no MPEG-1 Layer III frame in the first 70000 bytes/)
  listener.free()
})
