// The station's alerts (document 2): RADIO.alert.disk when the watched file system's usage crosses
// its threshold (80% of / by default), RADIO.alert.prune when the prune job's log goes stale.
import { statfsSync, statSync } from 'node:fs'
import type { ContractBus } from '../../engine/bus/contract_bus.js'
import { RADIO_SUBJECTS } from '../../engine/contracts/station.js'

export interface AlertOptions {
  disk_path?: string
  /** used fraction that raises the disk alert (default 0.8) */
  disk_threshold?: number
  /** the prune job's log; without one the prune alert is off */
  prune_log?: string
  /** the log is stale when unchanged for longer than this (default one day) */
  prune_stale_s?: number
  /** how often both are checked (default one minute) */
  period_ms?: number
}

/** Used fraction of the file system holding `path`, as `df` counts it (blocks in use over blocks
 * usable by ordinary users plus those in use). */
export function diskUsage(path: string): number {
  const s = statfsSync(path)
  const used = s.blocks - s.bfree
  return used / (used + s.bavail)
}

/** Checks on a timer; each alert is sent once when its condition starts, and again only after it
 * has cleared (so a full disk is one alert, not one a minute). */
export class AlertMonitor {
  private timer: NodeJS.Timeout | undefined
  private diskRaised = false
  private pruneRaised = false

  constructor(
    private readonly bus: Pick<ContractBus, 'publish'>,
    private readonly o: AlertOptions,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.check()
    this.timer = setInterval(() => this.check(), this.o.period_ms ?? 60_000)
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
  }

  check(): void {
    const path = this.o.disk_path ?? '/'
    const threshold = this.o.disk_threshold ?? 0.8
    const used = diskUsage(path)
    if (used >= threshold && !this.diskRaised) this.bus.publish(RADIO_SUBJECTS.disk, { path, used_fraction: used, threshold })
    this.diskRaised = used >= threshold
    if (!this.o.prune_log) return
    const staleAfter = this.o.prune_stale_s ?? 86_400
    let modified: Date | null = null
    try {
      modified = statSync(this.o.prune_log).mtime
    } catch {
      // a missing log is as stale as can be
    }
    const stale = !modified || this.now() - modified.getTime() > staleAfter * 1000
    if (stale && !this.pruneRaised)
      this.bus.publish(RADIO_SUBJECTS.prune, {
        log_path: this.o.prune_log,
        last_modified: modified?.toISOString() ?? null,
        stale_after_s: staleAfter,
      })
    this.pruneRaised = stale
  }
}
