// `crystal` (also `svc-crystal`): the command line. Tables for people, --json for machines, progress
// on stderr, one sentence on stderr for an error (a stack trace only with --debug), and exit codes
// from one table (cli/errors.ts): 0 success, 1 the work failed, 2 the command was misused.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { isCrystalError } from '../engine/errors.js'
import { BACKEND_CHOICES } from '../engine/field/backend.js'
import pkg from '../package.json' with { type: 'json' }
import { registerArchive } from './commands/archive.js'
import { registerBench } from './commands/bench.js'
import { registerEvolve } from './commands/evolve.js'
import { registerMarkets } from './commands/markets.js'
import { registerMaterials } from './commands/materials.js'
import { registerMedium } from './commands/medium.js'
import { registerPerceive } from './commands/perceive.js'
import { registerPrimitives } from './commands/primitives.js'
import { registerPublish } from './commands/publish.js'
import { registerRun } from './commands/run.js'
import { registerServe } from './commands/serve.js'
import { registerWatch } from './commands/watch.js'
import { contextOf, DEFAULT_DATA_DIR } from './context.js'
import { EXIT_STATUS } from './errors.js'

function program(): Command {
  const cli = new Command('crystal')
    .description('Resonant Crystal: a resonant wave field that remembers what is written into it.')
    .version(pkg.version, '-V, --version')
    .addOption(new Option('--backend <backend>', 'compute backend').choices(BACKEND_CHOICES).default('auto').env('CRYSTAL_BACKEND'))
    .addOption(
      new Option('--data-dir <dir>', 'where materials and the registry live')
        .env('SVC_CRYSTAL_DATA_DIR')
        .argParser((dir) => {
          // '' would be the working directory, unasked
          if (!dir.trim()) throw new InvalidArgumentError('takes a folder, got an empty value')
          return dir
        })
        .default(DEFAULT_DATA_DIR, '~/.svc-crystal'),
    )
    .option('-q, --quiet', 'no progress or notices on stderr (errors still)')
    .option('--debug', "stack traces for errors; each GPU engine's transfers; where each evolve generation's time went")
    // set before the subcommands are added, so that they inherit them
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (s, write) => write(s) })
    .addHelpText('after', "\nRun `crystal <command> --help` for a command's options and examples.")
  const ctx = () => contextOf(cli)
  registerMaterials(cli, ctx)
  registerEvolve(cli, ctx)
  registerPrimitives(cli, ctx)
  registerRun(cli, ctx)
  registerPublish(cli, ctx)
  registerServe(cli, ctx)
  registerArchive(cli, ctx)
  registerWatch(cli, ctx)
  registerMedium(cli, ctx)
  registerMarkets(cli, ctx)
  registerPerceive(cli)
  registerBench(cli)
  return cli
}

/**
 * Commands whose action returns only once all of their work is done and awaited (evolve: the registry
 * written under its lock and the lock given back, the summary written). After one, the process may end
 * at once (endsAtOnce), skipping Node's cleanup of its environment, where Dawn finalizes its objects one
 * by one: 70 to 100 ms after evolve's last line on the H200 (docs/gpu.md). The others end as Node ends them.
 */
const DONE_WHEN_RETURNED = new Set(['evolve'])
let done = false

/** The command that ran has finished all of its work: nothing is left for the event loop to do. */
export function endsAtOnce(): boolean {
  return done
}

export async function main(argv = process.argv): Promise<number> {
  const cli = program()
  // commander takes a variable that is set but empty as the option's value ('' for --data-dir: the
  // registry would go to the working directory); an empty value counts as unset (README "Environment")
  for (const { envVar } of cli.options) if (envVar && process.env[envVar] === '') delete process.env[envVar]
  cli.hook('postAction', (_, action) => {
    done = DONE_WHEN_RETURNED.has(action.name())
  })
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
