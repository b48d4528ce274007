// `npm run demo-library -- [DIR] [--seconds S] [--tracks N]`: writes the synthesised demo library
// (known tempi and keys, nothing copyrighted) so `crystal serve --music DIR` has something to play.
import { parseArgs } from 'node:util'
import { demoTracks, writeDemoLibrary } from '../server/station/demo.js'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { seconds: { type: 'string', default: '40' }, tracks: { type: 'string', default: '8' } },
})
const dir = positionals[0] ?? 'music'
const seconds = Number(values.seconds)
const count = Number(values.tracks)
if (!(seconds >= 2 && seconds <= 600) || !(Number.isInteger(count) && count >= 1 && count <= 64)) {
  process.stderr.write('demo-library: --seconds must be 2 to 600 and --tracks 1 to 64\n')
  process.exit(2)
}
const tracks = demoTracks(seconds, count)
for (const [i, file] of (await writeDemoLibrary(dir, tracks)).entries())
  process.stdout.write(`${file}  (${tracks[i].bpm} BPM, ${tracks[i].key})\n`)
