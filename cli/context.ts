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
import type { BackendChoice, TransferCounts } from '../engine/field/backend.js'
import { dawnLoop } from '../engine/gpu/wait.node.js'
import { createNodeEngine } from '../engine/node.js'
import { FileRegistryStore } from '../engine/registry/file_store.node.js'
import { Registry } from '../engine/registry/registry.js'

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

type Shape = { size: number; fields: number; engines: number; counts: TransferCounts }
const shapes = new Map<string, Shape>()
/** Each engine not yet destroyed: books its counts. */
const live = new Set<() => void>()
let listening = false

/**
 * --debug: the GPU engines' host-device traffic, on stderr when the process ends, a line for each
 * shape (N, fields) summed over its engines. One exit listener a process (evolve opens an engine a
 * generation), and an engine's counts are taken as it is destroyed (they outlive the device), so no
 * engine is held until the end (explore opens engines for days).
 */
function reportTransfersAtExit(engine: Engine): void {
  const book = () => {
    const t = engine.transfers()
    if (!t) return
    const key = `${engine.size}x${engine.fields}`
    const shape = shapes.get(key) ?? { size: engine.size, fields: engine.fields, engines: 0, counts: zeroCounts() }
    shape.engines++
    for (const k of Object.keys(t) as (keyof TransferCounts)[]) shape.counts[k] += t[k]
    shapes.set(key, shape)
  }
  if (!listening) {
    listening = true
    process.once('exit', () => {
      for (const e of live) e()
      for (const s of shapes.values()) process.stderr.write(transfersLine(s))
      reportPollsOnce()
    })
  }
  const destroy = engine.destroy.bind(engine)
  live.add(book)
  engine.destroy = () => {
    if (live.delete(book)) book()
    destroy()
  }
}

const zeroCounts = (): TransferCounts => ({ bytes_read: 0, reads: 0, bytes_written: 0, writes: 0, submits: 0, dispatches: 0 })

function transfersLine({ size, fields, engines, counts: t }: Shape): string {
  const shape = `N = ${size}, ${fields} field${fields === 1 ? '' : 's'}${engines === 1 ? '' : `, ${n(engines)} engines`}`
  return `crystal: gpu transfers (${shape}): read back ${n(t.bytes_read)} bytes in ${n(t.reads)} reads, wrote ${n(t.bytes_written)} bytes in ${n(t.writes)} writes, ${n(t.dispatches)} dispatches in ${n(t.submits)} submits\n`
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
