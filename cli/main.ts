// `crystal` (also `svc-crystal`): the command line. Tables for people, --json for machines, one
// sentence on stderr for an error (a stack trace only with --debug), exit codes from cli/errors.ts.
import { Argument, Command, CommanderError, Option } from 'commander'
import Table from 'cli-table3'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { isCrystalError } from '../engine/errors.js'
import { fingerprint, type Fingerprint } from '../engine/field/fingerprint.js'
import { loadCatalog } from '../engine/field/materials.node.js'
import { BACKEND_CHOICES } from '../engine/field/select.js'
import pkg from '../package.json' with { type: 'json' }
import { EXIT_STATUS } from './errors.js'
import { BENCHES, runBench, type BenchName } from '../bench/main.js'

export function defaultDataDir(): string {
  return process.env.SVC_CRYSTAL_DATA_DIR || join(homedir(), '.svc-crystal')
}

function program(): Command {
  const cli = new Command('crystal')
    .description('Resonant Crystal: a resonant wave field that remembers what is written into it.')
    .version(pkg.version, '-V, --version')
    .addOption(new Option('--backend <backend>', 'compute backend').choices(BACKEND_CHOICES).default('auto').env('CRYSTAL_BACKEND'))
    .addOption(new Option('--data-dir <dir>', 'where materials and the registry live').env('SVC_CRYSTAL_DATA_DIR').default(defaultDataDir(), '~/.svc-crystal'))
    .option('--debug', 'print stack traces for errors')
    // set before the subcommands are added, so that they inherit them
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (s, write) => write(s) })

  cli
    .command('materials')
    .description('list the materials: the eight built-ins, <data dir>/materials/*.json and --material-file')
    .option('--json', 'print JSON instead of a table')
    .option('--material-file <file...>', 'also load these material files')
    .option('--fingerprint', 'measure each material\'s fingerprint (energy retention, dispersion, noise; about a second each)')
    .addHelpText('after', '\nExamples:\n  crystal materials\n  crystal materials --json --fingerprint\n  crystal materials --material-file my_glass.json')
    .action(async (o: { json?: boolean; materialFile?: string[]; fingerprint?: boolean }) => {
      const entries = loadCatalog(cli.opts().dataDir, o.materialFile).list()
      const prints = new Map<string, Fingerprint>()
      if (o.fingerprint) for (const e of entries) prints.set(e.material.name, await fingerprint(e.material))
      if (o.json) {
        const rows = entries.map((e) => ({ ...e.material, source: e.source, ...(o.fingerprint ? { fingerprint: prints.get(e.material.name) } : {}) }))
        process.stdout.write(JSON.stringify(rows, null, 2) + '\n')
        return
      }
      const head = ['Name', 'Wave speed', 'Damping', 'Reflectivity', 'Nonlinearity', 'Viscosity', 'Temp. (K)', 'Noise coupling', 'Source']
      if (o.fingerprint) head.push('Retention', 'Dispersion', 'Noise RMS')
      const table = new Table({ head, style: { head: [], border: [] }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } })
      for (const { material: m, source } of entries) {
        const row: (string | number)[] = [m.name, m.wave_speed, m.damping, m.boundary_reflectivity, m.nonlinearity, m.viscosity, m.temperature_k, m.noise_coupling, source]
        const f = prints.get(m.name)
        if (f) row.push(f.energy_retention.toExponential(2), f.dispersion.toFixed(3), f.noise.toExponential(2))
        table.push(row)
      }
      process.stdout.write(table.toString() + '\n')
    })
  cli
    .command('bench')
    .description('measure speed and memory quality; prints tables and writes JSON')
    .addArgument(new Argument('[name]', 'which benchmark').choices([...BENCHES, 'all']).default('all'))
    .option('--json', 'print the reports as JSON on stdout (progress still goes to stderr)')
    .option('--out <dir>', 'where the JSON reports go', 'bench/results')
    .addHelpText(
      'after',
      '\nBenchmarks:\n  field      cell-updates/s per backend, N = 128, 512, 2048 and 64 x 96^2, 1 and 2 threads\n  memory     identity margin, rejection, noise robustness, capacity: the medium against two baselines\n  discovery  genome evaluations/s, a 10 x 12 evolve, recall latency over 10,000 memories',
    )
    .action(async (name: BenchName | 'all', o: { json?: boolean; out: string }) => {
      await runBench(name, { out: o.out, json: !!o.json, say: (line) => process.stderr.write(line + '\n') })
    })
  return cli
}

export async function main(argv = process.argv): Promise<number> {
  const cli = program()
  try {
    await cli.parseAsync(argv)
    return 0
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2
    if (isCrystalError(e)) {
      process.stderr.write(`crystal: ${e.message}${e.hint ? ` (${e.hint})` : ''}\n`)
      if (cli.opts().debug) process.stderr.write(`${e.stack}\n`)
      return EXIT_STATUS[e.code]
    }
    process.stderr.write(`crystal: unexpected failure: ${(e as Error).message ?? String(e)} (run with --debug for details)\n`)
    if (cli.opts().debug) process.stderr.write(`${(e as Error).stack}\n`)
    return 1
  }
}
