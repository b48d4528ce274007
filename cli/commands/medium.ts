// `crystal write` and `crystal ask`: a medium that persists between commands (<data dir>/medium.bin).
// Every failure exits non-zero with a message; an answer is never an empty line with exit 0.
import { Option, type Command } from 'commander'
import { readFile } from 'node:fs/promises'
import { ENCODINGS } from '../../engine/contracts/api.js'
import { ENCODING_VERSION, type EncodingVersion } from '../../engine/encode/text.js'
import { CrystalError } from '../../engine/errors.js'
import { MediumStore } from '../../engine/medium/file_store.node.js'
import { AGE_PER_WRITE, ask, writeTexts } from '../../engine/medium/medium.js'
import { realNumber, wholeNumber, type CliContext } from '../context.js'

export function registerMedium(cli: Command, ctx: () => CliContext): void {
  cli
    .command('write')
    .description(`write text into the persisted medium (<data dir>/medium.bin); the field runs ${AGE_PER_WRITE} steps before each write`)
    .argument('[text]', 'the text')
    .option('--importance <x>', 'how strongly to write it', realNumber('--importance', -10, 10), 1)
    .option('--file <path>', 'write every non-empty line of a file (many at once)')
    .option('--size <n>', 'field side N of a new medium', wholeNumber('--size', 16, 1024), 64)
    .option('--material <name>', 'material of a new medium', 'ideal_resonator')
    .addOption(
      new Option('--encoding <version>', 'text encoding of a new medium (an existing one keeps its own; docs/recall.md)')
        .choices(ENCODINGS.map(String))
        .default(String(ENCODING_VERSION)),
    )
    .addHelpText('after', '\nExamples:\n  crystal write "the cold glyph remembers"\n  crystal write --file notes.txt --importance 0.5')
    .action(
      async (text: string | undefined, o: { importance: number; file?: string; size: number; material: string; encoding: string }) => {
        const c = ctx()
        c.catalog().get(o.material)
        let texts: string[] = text !== undefined ? [text] : []
        if (o.file) {
          let body: string
          try {
            body = await readFile(o.file, 'utf8')
          } catch (e) {
            throw new CrystalError('not_found', `cannot read ${o.file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, {
              file: o.file,
            })
          }
          texts = [
            ...texts,
            ...body
              .split('\n')
              .map((l) => l.trim())
              .filter(Boolean),
          ]
        }
        if (!texts.length || texts.some((t) => t.trim() === ''))
          throw new CrystalError('bad_argument', 'nothing to write: give a text or --file with non-empty lines', { field: 'text' })
        const store = new MediumStore(c.dataDir)
        const { total, step } = await store.update(
          { size: o.size, material: o.material, encoding: Number(o.encoding) as EncodingVersion },
          async (m) => {
            await writeTexts(
              m,
              texts.map((t) => ({ text: t, importance: o.importance })),
              (e) => c.open(e),
            )
            return { total: m.memories.length, step: m.step_count }
          },
        )
        process.stdout.write(
          `wrote ${texts.length === 1 ? `"${texts[0]}"` : `${texts.length} texts`} (${AGE_PER_WRITE} steps apart, now step ${step}); the medium holds ${total} memor${total === 1 ? 'y' : 'ies'}\n`,
        )
      },
    )

  cli
    .command('ask')
    .description('the memories of the persisted medium that resonate most with a text, above the noise floor')
    .argument('<text>', 'the question')
    .option('-k <n>', 'how many answers', wholeNumber('-k', 1, 1000), 5)
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  crystal ask "glyph"\n  crystal ask "cold glyph" -k 3 --json')
    .action(async (text: string, o: { k: number; json?: boolean }) => {
      const c = ctx()
      const m = await new MediumStore(c.dataDir).load()
      if (!m) throw new CrystalError('not_found', `there is no medium in ${c.dataDir} yet; write something first (crystal write "text")`)
      const r = await ask(m, text, o.k, (e) => c.open(e))
      if (o.json) process.stdout.write(JSON.stringify(r, null, 2) + '\n')
      else {
        for (const h of r.hits)
          process.stdout.write(
            `${h.rank}. "${h.text}"  match ${h.match.toFixed(3)}, strength ${h.strength.toFixed(3)} (noise floor ${h.noise_floor.toFixed(3)}, written at step ${h.step})\n`,
          )
        if (!r.hits.length && !r.over_capacity) process.stdout.write(`${r.reason}\n`)
      }
      // beyond capacity the ranking is a guess: say so on stderr and fail, never a confident answer
      if (r.over_capacity) throw new CrystalError('over_capacity', r.reason!)
    })
}
