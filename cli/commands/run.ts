// `crystal run <file.crystal>`: parse and check the whole program first (every error with file, line
// and column; nothing runs and nothing is registered if there is one), then interpret it, a line per
// command (or a JSON trace, which holds the error too when the program fails partway).
import type { Command } from 'commander'
import { FIELD_SIZE } from '../../engine/contracts/api.js'
import { readFile } from 'node:fs/promises'
import { CrystalError, isCrystalError } from '../../engine/errors.js'
import { interpret, type TraceEntry } from '../../engine/lang/interpret.js'
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
      // --material replaces every MATERIAL of the program: their names are not looked up
      const world = { materials: catalog.list().map((e) => e.material.name), primitiveIds: ids, material: o.material }
      errors.push(...check(commands, world, file))
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
      // the lines that ran, so that a failure partway still reports them (text mode has printed them)
      const trace: TraceEntry[] = []
      const printJson = (error?: Record<string, unknown>) =>
        process.stdout.write(
          JSON.stringify(
            {
              file,
              material_override: o.material ?? null,
              size: o.size,
              trace: trace.map(({ text: _, ...rest }) => rest),
              ...(error ? { error } : {}),
            },
            null,
            2,
          ) + '\n',
        )
      try {
        await interpret(commands, {
          open: c.open,
          catalog,
          registry,
          size: o.size,
          material: o.material,
          file,
          onResult: (entry) => {
            trace.push(entry)
            if (!o.json) process.stdout.write(`${String(entry.line).padStart(3)}  ${entry.text}\n`)
          },
        })
      } catch (e) {
        // --json: the completed lines and the error on stdout; the error on stderr and the exit status as ever
        if (o.json)
          printJson(
            isCrystalError(e)
              ? { code: e.code, message: e.message, where: e.where, ...(e.hint ? { hint: e.hint } : {}) }
              : { code: 'internal', message: (e as Error).message ?? String(e), where: {} },
          )
        throw e
      }
      if (o.json) printJson()
    })
}
