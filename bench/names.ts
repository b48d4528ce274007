// The benchmarks' names, alone in a file without imports: the CLI lists them in `crystal bench --help`
// and loads the benchmarks themselves (bench/main.ts) only when one runs.
export const BENCHES = [
  'field',
  'dream',
  'recall',
  'memory',
  'discovery',
  'server',
  'observatory',
  'swarm',
  'markets',
  'station',
  'open',
] as const
export type BenchName = (typeof BENCHES)[number]
