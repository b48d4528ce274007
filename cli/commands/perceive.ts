// `crystal perceive SOURCE`: the station's 296-number perception of an MP3 file or stream URL, as a
// table of its named features or as JSON (the layout in docs/station.md).
import Table from 'cli-table3'
import type { Command } from 'commander'
import { at, PERCEPTION_LAYOUT, PITCH_CLASSES } from '../../engine/station/perception.js'
import { realNumber } from '../context.js'

export function registerPerceive(cli: Command): void {
  cli
    .command('perceive <source>')
    .description("the station's 296-number perception of an MP3 file or stream URL (docs/station.md)")
    .option('--seconds <s>', 'how long to listen to a stream URL', realNumber('--seconds', 1, 3600), 10)
    .option('--json', 'print the layout and all 296 numbers as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  crystal perceive "music/Lattice Choir/First Light/01 Europium Dawn.mp3"\n  crystal perceive http://127.0.0.1:3339/stream --seconds 20 --json',
    )
    .action(async (source: string, o: { seconds: number; json?: boolean }) => {
      const { perceiveSource } = await import('../../server/station/perception.js')
      const v = await perceiveSource(source, o.seconds)
      if (o.json) {
        const features = Object.fromEntries(
          PERCEPTION_LAYOUT.map(([name, from, length]) => [name, length === 1 ? v[from] : Array.from(v.subarray(from, from + length))]),
        )
        process.stdout.write(JSON.stringify({ source, length: v.length, features }, null, 2) + '\n')
        return
      }
      const chroma = Array.from(v.subarray(at('chroma'), at('chroma') + 12))
      const table = new Table({
        head: ['Feature', 'Value'],
        style: { head: [], border: [] },
        chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
      })
      table.push(
        ['tempo', `${v[at('tempo')].toFixed(1)} BPM`],
        ['onsets', `${v[at('onset_density')].toFixed(2)} a second`],
        ['strongest pitch class', PITCH_CLASSES[chroma.indexOf(Math.max(...chroma))]],
        ['dominant pitch', `${(440 * 2 ** v[at('pitch')]).toFixed(1)} Hz`],
        ['level', `${v[at('rms_mean')].toFixed(1)} dB (deviation ${v[at('rms_std')].toFixed(1)})`],
        ['spectral centroid', `${v[at('centroid')].toFixed(0)} Hz`],
        ['spectral flatness', v[at('flatness')].toFixed(3)],
        ['zero crossings', `${v[at('zcr')].toFixed(4)} a sample`],
        ['crest factor', `${v[at('crest')].toFixed(1)} dB`],
      )
      process.stdout.write(`${source}: 296 numbers (crystal perceive --json for all of them)\n${table.toString()}\n`)
    })
}
