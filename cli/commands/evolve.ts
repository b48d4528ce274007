// `crystal evolve` and `crystal explore`: evolutionary discovery into the registry, with a progress
// bar on a terminal and plain lines when piped; explore runs rounds until stopped (Ctrl-C finishes
// the round, which is saved as it registers, then exits).
import { SingleBar } from 'cli-progress'
import type { Command } from 'commander'
import { availableParallelism } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { FIELD_SIZE, SEARCH_DEFAULTS } from '../../engine/contracts/api.js'
import { CLASS_NAMES, type ClassToken } from '../../engine/contracts/registry.js'
import { archivesInWords } from '../../engine/discovery/archive.js'
import { DEFAULT_MIN_PERSISTENCE, discover, type DiscoveryProgress, type DiscoveryResult } from '../../engine/discovery/discovery.js'
import type { BatchTimes, EvaluationTimes } from '../../engine/discovery/evaluate.js'
import { type DetectPool, searchPool } from '../../engine/discovery/pool.node.js'
import { CrystalError } from '../../engine/errors.js'
import { exploreRound } from '../../engine/swarm/rounds.js'
import { gpuTransfers, interactive, realNumber, wholeNumber, type CliContext } from '../context.js'
import { primitivesTable } from './primitives.js'

interface SearchOptions {
  generations: number
  population: number
  size: number
  seed: number
  minPersistence: number
  detectThreads: number
  materialFile?: string[]
  json?: boolean
}

function searchOptions(c: Command): Command {
  return c
    .option('--population <n>', 'genomes per generation', wholeNumber('--population', 2, 4096), SEARCH_DEFAULTS.population)
    .option('--size <n>', 'field side N', wholeNumber('--size', FIELD_SIZE.minimum, FIELD_SIZE.maximum), SEARCH_DEFAULTS.size)
    .option('--seed <n>', 'seed of the search (the same seed, the same run)', wholeNumber('--seed', 0, 2 ** 32 - 1), SEARCH_DEFAULTS.seed)
    .option(
      '--min-persistence <x>',
      'register only structures at least this persistent',
      realNumber('--min-persistence', 0, 1),
      DEFAULT_MIN_PERSISTENCE,
    )
    .option(
      '--detect-threads <n>',
      "worker threads that detect each generation's structures (0: on the main thread)",
      wholeNumber('--detect-threads', 0, 1024),
      availableParallelism(),
    )
    .option('--material-file <file...>', 'also load these material files')
    .option(
      '--json',
      'JSON lines on stdout: evolve, one per generation and then {"result": ...}; explore, one per round (with its generations)',
    )
}

const generationLine = (p: DiscoveryProgress) =>
  `best fitness ${p.best_fitness.toFixed(3)}, mean ${p.mean_fitness.toFixed(3)}, QD-score ${p.qd_score.toFixed(2)}, coverage ${(100 * p.coverage).toFixed(1)}% (${p.elites} cells)`

/** Progress for people: a redrawn bar on a terminal, one line per generation otherwise; with --json, one JSON line per generation on stdout. */
function progressReporter(ctx: CliContext, label: string, total: number, json: boolean) {
  const line = json ? (p: DiscoveryProgress) => process.stdout.write(JSON.stringify({ material: label, ...p }) + '\n') : () => {}
  if (ctx.quiet) return { update: line, stop: () => {} }
  if (interactive()) {
    const bar = new SingleBar({ format: `${label} [{bar}] generation {value}/{total} | {line}`, hideCursor: true, stream: process.stderr })
    bar.start(total, 0, { line: '' })
    return {
      update: (p: DiscoveryProgress) => {
        line(p)
        bar.update(p.generation, { line: generationLine(p) })
      },
      stop: () => bar.stop(),
    }
  }
  return {
    update: (p: DiscoveryProgress) => {
      line(p)
      ctx.say(`${label} generation ${p.generation}/${p.generations}: ${generationLine(p)}`)
    },
    stop: () => {},
  }
}

const seconds = (ms: number) => (ms / 1000).toFixed(3)

/**
 * --debug: where each generation's time went (engine/discovery/evaluate.ts EvaluationTimes), a line on
 * stderr as the generation ends, with what its GPU engines read back (issue 22's reads a generation);
 * undefined without --debug.
 */
function timesReporter(c: CliContext, label: string) {
  if (!c.debug) return undefined
  // in the order the phases ran (on the CPU backend detection comes before the perturbation, on the GPU after)
  const phases = (ms: BatchTimes) =>
    Object.entries(ms)
      .map(([k, v]) => `${k} ${seconds(v)}`)
      .join(', ')
  let before = gpuTransfers()
  return (generation: number, t: EvaluationTimes) => {
    const now = gpuTransfers()
    // as the transfers line at the end says it
    const read = now
      ? `; gpu: read back ${(now.bytes_read - (before?.bytes_read ?? 0)).toLocaleString('en-US')} bytes in ${now.reads - (before?.reads ?? 0)} reads`
      : ''
    before = now
    process.stderr.write(
      `crystal: ${label} generation ${generation} evaluated in ${seconds(t.total)} s: waves ${seconds(t.waves)}; batch: ${phases(t.batch)}${read}\n`,
    )
  }
}

/** " (12 Attractor Field, 3 Standing Echo)": the elites per class, most first. */
function byClass(r: DiscoveryResult): string {
  const counts = Object.entries(r.elites_by_class).sort((a, b) => b[1] - a[1])
  return counts.length ? ` (${counts.map(([c, k]) => `${k} ${CLASS_NAMES[c as ClassToken]}`).join(', ')})` : ''
}

/** The detection pool of --detect-threads workers (none: 0), started now (searchPool). */
function pool({ detectThreads, size, population }: SearchOptions): DetectPool | undefined {
  return detectThreads ? searchPool(detectThreads, { size, population }) : undefined
}

function summary(r: DiscoveryResult, seconds: number): string {
  const head = `registered ${r.registered.length} new primitive${r.registered.length === 1 ? '' : 's'} (${r.rejected_duplicates} duplicate${r.rejected_duplicates === 1 ? '' : 's'} rejected) from ${r.elites} archive elites${byClass(r)} of ${r.evaluated} genomes in ${seconds.toFixed(1)} s; best fitness ${r.best_fitness.toFixed(3)}; ${archivesInWords(r, r.registered_archive)}`
  return r.registered.length ? `${primitivesTable(r.registered)}\n${head}\n` : `${head}\n`
}

export function registerEvolve(cli: Command, ctx: () => CliContext): void {
  searchOptions(
    cli
      .command('evolve')
      .description('search for persistent structures by evolution and register the novel ones')
      .requiredOption('--material <name>', 'the material to search in (required)')
      .requiredOption('--generations <n>', 'generations to run (required)', wholeNumber('--generations', 1, 10_000)),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  crystal evolve --material europium_crystal --generations 10\n  crystal evolve --material silicon --generations 5 --population 24 --size 64 --seed 7 --json',
    )
    .action(async (o: SearchOptions & { material: string }) => {
      const c = ctx()
      const material = c.catalog(o.materialFile).get(o.material)
      await c.writable()
      const progress = progressReporter(c, material.name, o.generations, !!o.json)
      const t0 = performance.now()
      const detector = pool(o)
      const result = await discover({
        material,
        generations: o.generations,
        population: o.population,
        size: o.size,
        seed: o.seed,
        min_persistence: o.minPersistence,
        registry: c.registry(),
        open: c.open,
        detector,
        onProgress: progress.update,
        onTimes: timesReporter(c, material.name),
      }).finally(() => {
        progress.stop()
        detector?.close()
      })
      if (o.json) process.stdout.write(JSON.stringify({ result }) + '\n')
      else process.stdout.write(summary(result, (performance.now() - t0) / 1000))
    })

  searchOptions(
    cli
      .command('explore')
      .description('search round after round, rotating materials, until stopped (Ctrl-C finishes the round and exits)')
      .requiredOption('--material <names>', 'a material, several separated by commas, or all (required)')
      .option('--interval <seconds>', 'pause between rounds', realNumber('--interval', 0, 86_400), 10)
      .option('--generations <n>', 'generations per round', wholeNumber('--generations', 1, 10_000), 3)
      .option('--rounds <n>', 'stop after this many rounds (default: until stopped)', wholeNumber('--rounds', 1, 1_000_000)),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  crystal explore --material all --interval 30\n  crystal explore --material europium_crystal,silicon --interval 5 --rounds 4',
    )
    .action(async (o: SearchOptions & { material: string; interval: number; rounds?: number }) => {
      const c = ctx()
      const catalog = c.catalog(o.materialFile)
      const names =
        o.material === 'all'
          ? catalog.list().map((e) => e.material.name)
          : o.material
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
      if (!names.length) throw new CrystalError('bad_argument', '--material names no material', { field: 'material' })
      const materials = names.map((n) => catalog.get(n))
      await c.writable()
      let stopping = false
      // the pause between rounds ends at once on Ctrl-C (and leaves no timer holding the process)
      const pause = new AbortController()
      const onSigint = () => {
        if (stopping) process.exit(130)
        stopping = true
        c.say('stopping: finishing this round (Ctrl-C again to quit at once)')
        pause.abort()
      }
      process.on('SIGINT', onSigint)
      const totals = { rounds: 0, registered: 0, evaluated: 0, announced: 0, merged: 0 }
      // on the bus (SVC_NATS_URL): merge the swarm's finds before each round, announce our own after it
      const { bus, announce_floor: floor } = c.settings
      // the NATS client loads only on the bus, not for every evolve
      const link = bus.url
        ? await (await import('../../engine/swarm/link.node.js')).SwarmLink.open({ ...bus, url: bus.url }, c.dataDir, c.say)
        : undefined
      const requests: { material: string; generations: number }[] = []
      const detector = pool(o)
      link?.onRequest((r) => {
        if (catalog.list().some((e) => e.material.name === r.material)) requests.push(r)
        else c.say(`swarm: ignoring a request from ${r.sender} for unknown material ${r.material}`)
      })
      try {
        for (let round = 0; !stopping && (o.rounds === undefined || round < o.rounds); round++) {
          const asked = requests.shift()
          const material = asked ? catalog.get(asked.material) : materials[round % materials.length]
          // each generation's figures, for the --json line (what the Swarm view's chart draws for a tab's round)
          const generations: DiscoveryProgress[] = []
          const { result: r, swarm } = await exploreRound(
            link,
            round + 1,
            floor,
            {
              material,
              generations: asked?.generations ?? o.generations,
              population: o.population,
              size: o.size,
              seed: o.seed + round,
              min_persistence: o.minPersistence,
              registry: c.registry(),
              open: c.open,
              detector,
              onProgress: (p) => generations.push(p),
              onTimes: timesReporter(c, `round ${round + 1} ${material.name}`),
            },
            discover,
          )
          const [merged, announced] = [swarm?.merged, swarm?.announced]
          totals.rounds++
          totals.registered += r.registered.length
          totals.evaluated += r.evaluated
          totals.announced += announced?.sent ?? 0
          totals.merged += merged?.merged ?? 0
          const line = {
            round: round + 1,
            material: material.name,
            registered: r.registered.map((p) => p.id),
            duplicates: r.rejected_duplicates,
            best_fitness: r.best_fitness,
            qd_score: r.qd_score,
            coverage: r.coverage,
            elites: r.elites,
            registered_archive: r.registered_archive,
            generations,
            ...(link ? { merged: merged!.merged, announced: announced!.sent, waiting: announced!.waiting } : {}),
          }
          if (o.json) process.stdout.write(JSON.stringify(line) + '\n')
          else
            process.stdout.write(
              `round ${line.round} (${material.name}): registered ${r.registered.length}${r.registered.length ? ` (${line.registered.join(', ')})` : ''}, ${r.rejected_duplicates} duplicates, best fitness ${r.best_fitness.toFixed(3)}; ${archivesInWords(r, r.registered_archive)}${link ? `; merged ${merged!.merged} from the swarm, announced ${announced!.sent}${announced!.waiting ? `, ${announced!.waiting} waiting for the bus` : ''}` : ''}\n`,
            )
          const last = o.rounds !== undefined && round + 1 >= o.rounds
          if (!stopping && !last && o.interval > 0)
            await sleep(o.interval * 1000, undefined, { signal: pause.signal }).catch(() => undefined)
        }
        // one last try for anything still waiting on the bus
        if (link) await link.flush()
      } finally {
        process.off('SIGINT', onSigint)
        detector?.close()
        await link?.close()
      }
      c.say(
        `explored ${totals.rounds} round${totals.rounds === 1 ? '' : 's'}: ${totals.registered} registered from ${totals.evaluated} genomes${link ? `; ${totals.merged} merged from the swarm, ${totals.announced} announced` : ''}`,
      )
    })
}
