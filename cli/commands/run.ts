// `crystal run <file.crystal>`: parse and check the whole program first (every error with file, line
// and column; nothing runs and nothing is registered if there is one), then interpret it, a line per
// command (or a JSON trace).
import type { Command } from 'commander'
import { FIELD_SIZE } from '../../engine/contracts/api.js'
import { readFile } from 'node:fs/promises'
import { CrystalError } from '../../engine/errors.js'
import { interpret } from '../../engine/lang/interpret.js'
import { check, formatError, parse } from '../../engine/lang/parse.js'
import { wholeNumber, type CliContext } from '../context.js'

export function registerRun(cli: Command, ctx: () => CliContext): void {
  cli
    .command('run')
    .description('run a .crystal experiment (see docs/language.md and examples/)')
    .argument('<file>', 'the program')
    .option('--material <name>', "use this material instead of the program's MATERIAL")
    .option('--size <n>', 'field side N', wholeNumber('--size', FIELD_SIZE.minimum, FIELD_SIZE.maximum), 128)
    .option('--material-file <file...>', 'also load these material files')
    .option('--json', 'print a machine-readable trace instead of result lines')
    .addHelpText(
      'after',
      '\nExamples:\n  crystal run examples/first-light-europium.crystal\n  crystal run examples/recall-demo.crystal --material optical_cavity --json',
    )
    .action(async (file: string, o: { material?: string; size: number; materialFile?: string[]; json?: boolean }) => {
      const c = ctx()
      let source: string
      try {
        source = await readFile(file, 'utf8')
      } catch (e) {
        throw new CrystalError(
          'not_found',
          `cannot read the program ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
          { file },
        )
      }
      const catalog = c.catalog(o.materialFile)
      if (o.material) catalog.get(o.material)
      const registry = c.registry()
      const { commands, errors } = parse(source, file)
      const ids = new Set((await registry.list()).map((p) => p.id))
      errors.push(...check(commands, { materials: catalog.list().map((e) => e.material.name), primitiveIds: ids }, file))
      if (errors.length) {
        errors.sort((a, b) => a.line - b.line || a.column - b.column)
        for (const e of errors.slice(0, -1)) process.stderr.write(`crystal: ${formatError(e)}\n`)
        const last = errors.at(-1)!
        throw new CrystalError(
          'bad_program',
          `${formatError(last)}${errors.length > 1 ? ` (${errors.length} errors; nothing was run)` : ' (nothing was run)'}`,
          { file, line: last.line, column: last.column },
        )
      }
      const trace = await interpret(commands, {
        open: c.open,
        catalog,
        registry,
        size: o.size,
        material: o.material,
        file,
        onResult: (entry) => {
          if (!o.json) process.stdout.write(`${String(entry.line).padStart(3)}  ${entry.text}\n`)
        },
      })
      if (o.json)
        process.stdout.write(
          JSON.stringify(
            { file, material_override: o.material ?? null, size: o.size, trace: trace.map(({ text: _, ...rest }) => rest) },
            null,
            2,
          ) + '\n',
        )
    })
}
