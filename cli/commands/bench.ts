// `crystal bench`: the benchmarks of bench/ (also `npm run bench`).
import { Argument, InvalidArgumentError, type Command } from 'commander'
import { BENCHES, type BenchName } from '../../bench/names.js'
import type { BackendChoice } from '../../engine/field/backend.js'

export function registerBench(cli: Command): void {
  cli
    .command('bench')
    .description('measure speed and memory quality; prints tables and writes JSON')
    .addArgument(new Argument('[name]', 'which benchmark').choices([...BENCHES, 'all']).default('all'))
    .option('--json', 'print the reports as JSON on stdout (progress still goes to stderr)')
    .option('--out <dir>', 'where the JSON reports go', 'bench/results')
    .option(
      '--sizes <list>',
      'field, dream, recall: the sides N to run, comma-separated (default 128,512,2048; on a software adapter the GPU side stops at 512 unless sizes are named)',
      sizeList,
    )
    .option(
      '--memories <count>',
      'recall: memories written (default 200, and 20 above N = 512, where each write costs tenths of a second)',
      (v) => positive(v, '--memories'),
    )
    .addHelpText(
      'after',
      "\nBenchmarks:\n  field      cell-updates/s per backend, N = 128, 512, 2048 and 64 x 96^2, 1 and 2 threads; on the GPU 24 x 96^2 at 1 and 4 steps a dispatch\n  dream      ms per deep dream on the CPU and the GPU side by side, bytes the GPU read back (the field size beside it), GPU vs CPU agreement\n  recall     ms per recall on the CPU and the GPU side by side, bytes read back, the query's encoding time, whether both rank alike\n  memory     identity margin against a fair static store and the field erased (30 seeds), capacity by N\n  discovery  MAP-Elites against random search (QD-score, coverage; CRYSTAL_BENCH_SEEDS, _EVALUATIONS, _SIZE scale it), genome evaluations/s, a 10 x 12 evolve, recall latency\n  server     requests/s and latency of the REST API under load (autocannon)\n  observatory  the web UI: bundle size, first frame, frame rate in This tab mode (headless Chromium)\n  swarm      the archivist under 50 explorer clients: merge rate, announce-to-archived latency\n  markets    durable trades/s through HTTP from 50 clients, p50/p99, beside a read and a commit-per-trade control\n  station    real-time factor of decode + loudness + mix + encode, start to first audio byte, CPU share while streaming\n  open       what opening the GPU backend costs: the device, each kernel's compile, at once against one after another\n\n--backend (before bench) picks the sides: cpu or gpu runs that side alone, auto both (in dream and\nrecall the CPU side is the GPU's control).\n\nExamples:\n  crystal bench field --sizes 512\n  crystal --backend gpu bench recall --sizes 2048 --memories 200",
    )
    .action(async (name: BenchName | 'all', o: { json?: boolean; out: string; sizes?: number[]; memories?: number }) => {
      const { backend } = cli.opts<{ backend: BackendChoice }>()
      // loaded here, not at the CLI's start: the benchmarks pull in autocannon, a browser, the lamejs control
      const { runBench } = await import('../../bench/main.js')
      await runBench(name, {
        out: o.out,
        json: !!o.json,
        sizes: o.sizes,
        memories: o.memories,
        backend,
        say: (line) => process.stderr.write(line + '\n'),
      })
    })
}

function positive(v: string, flag: string): number {
  const x = Number(v)
  if (!Number.isInteger(x) || x < 1) throw new InvalidArgumentError(`${flag} takes a whole number of 1 or more, got "${v}"`)
  return x
}

function sizeList(v: string): number[] {
  return v.split(',').map((s) => {
    const n = Number(s.trim())
    if (!Number.isInteger(n) || n < 16 || n > 4096) throw new InvalidArgumentError(`--sizes takes sides from 16 to 4096, got ${s.trim()}`)
    return n
  })
}
