// What every command shares: the global options resolved once (data dir, backend, quiet), the
// settings from the environment (read here, the CLI's one reader of process.env), the material
// catalog, the registry on disk, and an engine opener that reports the backend once.
import { InvalidArgumentError, type Command } from 'commander'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { settingsFrom, type Settings } from '../engine/config.js'
import type { Engine, EngineOptions } from '../engine/field/engine.js'
import { loadCatalog } from '../engine/field/materials.node.js'
import type { MaterialCatalog } from '../engine/field/materials.js'
import { TransferTally } from '../engine/field/transfer_tally.js'
import type { BackendChoice, TransferCounts } from '../engine/field/backend.js'
import { dawnLoop } from '../engine/gpu/wait.node.js'
import { createNodeEngine } from '../engine/node.js'
import { FileRegistryStore } from '../engine/registry/file_store.node.js'
import { Registry } from '../engine/registry/registry.js'
import { writableFolder } from '../engine/util/folder.node.js'

/** Without --data-dir or SVC_CRYSTAL_DATA_DIR (commander reads that one). */
export const DEFAULT_DATA_DIR = join(homedir(), '.svc-crystal')

export interface CliContext {
  dataDir: string
  backend: BackendChoice
  quiet: boolean
  /** --debug: stack traces, and what a GPU engine moved and waited for, on stderr. */
  debug: boolean
  settings: Settings
  /** A line for people on stderr (progress, notices); silent with --quiet. */
  say(line: string): void
  catalog(files?: string[]): MaterialCatalog
  registry(): Registry
  /** Makes the data dir and checks it can be written: asked before long work that registers what it finds. */
  writable(): Promise<void>
  open(o: EngineOptions): Promise<Engine>
}

export function contextOf(cli: Command): CliContext {
  const g = cli.opts<{ dataDir: string; backend: BackendChoice; quiet?: boolean; debug?: boolean }>()
  const say = (line: string) => {
    if (!g.quiet) process.stderr.write(line + '\n')
  }
  let reported = false
  const settings = settingsFrom(process.env)
  return {
    dataDir: g.dataDir,
    backend: g.backend,
    quiet: !!g.quiet,
    debug: !!g.debug,
    settings,
    say,
    catalog: (files) => loadCatalog(g.dataDir, files),
    registry: () => new Registry(new FileRegistryStore(g.dataDir), settings.registry_limits),
    writable: () => writableFolder(g.dataDir, 'the data dir', 'choose another with --data-dir or SVC_CRYSTAL_DATA_DIR'),
    open: async (o) => {
      const engine = await createNodeEngine({
        backend: g.backend,
        ...settings.engine,
        ...o,
        report: (line) => {
          if (!reported) say(line)
          reported = true
        },
      })
      if (g.debug) reportTransfersAtExit(engine)
      return engine
    },
  }
}

const n = (v: number) => v.toLocaleString('en-US')

const tally = new TransferTally()
let listening = false

/**
 * --debug: the GPU engines' host-device traffic, on stderr when the process ends, a line for each
 * shape (N, fields) summed over its engines (engine/field/transfer_tally.ts). One exit listener a process.
 */
function reportTransfersAtExit(engine: Engine): void {
  if (!listening) {
    listening = true
    process.once('exit', () => {
      for (const line of tally.lines()) process.stderr.write(`crystal: ${line}\n`)
      reportPollsOnce()
    })
  }
  tally.track(engine)
}

/** --debug: what the GPU engines opened so far moved in all (none opened: undefined), for a line's share of it. */
export function gpuTransfers(): TransferCounts | undefined {
  return tally.total()
}

let pollsReported = false
/** --debug, after the engines' lines: how Dawn's polls for the device ran in this process (docs/gpu.md, "How Node waits for the device"). */
function reportPollsOnce(): void {
  const polls = dawnLoop()?.polls
  if (pollsReported || !polls) return
  pollsReported = true
  process.stderr.write(`crystal: dawn's polls for the device: ${n(polls.spun)} at once, ${n(polls.slept)} after a timer\n`)
}

/** A commander parser for a whole number in [min, max] (a bad value is a usage error, exit 2). */
export function wholeNumber(name: string, min: number, max: number) {
  return (raw: string): number => {
    const v = Number(raw)
    if (!Number.isInteger(v) || v < min || v > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}.`)
    return v
  }
}

/** A commander parser for a number in [min, max]. */
export function realNumber(name: string, min: number, max: number) {
  return (raw: string): number => {
    const v = Number(raw)
    if (raw.trim() === '' || !Number.isFinite(v) || v < min || v > max)
      throw new InvalidArgumentError(`${name} must be a number from ${min} to ${max}.`)
    return v
  }
}

/** Whether stderr is a terminal that a progress bar can redraw. */
export const interactive = () => !!process.stderr.isTTY
