// `crystal watch`: the consciousness subjects live from the bus, each with its age and a stale
// marker (stale: nothing for three publication periods). A redrawn table on a terminal; a table every
// few seconds when piped; --json prints the last values when --duration ends.
import Table from 'cli-table3'
import type { Command } from 'commander'
import { setTimeout as sleep } from 'node:timers/promises'
import { ContractBus, LiveValues, type LastSeen } from '../../engine/bus/contract_bus.js'
import { DEFAULT_PERIOD_MS } from '../../engine/consciousness/publisher.js'
import { interactive, realNumber, type CliContext } from '../context.js'

/** The fields worth a glance, per subject. */
function summary(v: LastSeen): string {
  const m = v.value
  const pick = (...keys: string[]) =>
    keys
      .filter((k) => k in m)
      .map((k) => `${k} ${typeof m[k] === 'number' ? Number(m[k]).toFixed(3) : String(m[k])}`)
      .join('  ')
  if (v.subject === 'SVC.consciousness') return pick('phi', 'phi_null', 'xi', 'order', 'num_clusters', 'consciousness_level', 'dreaming')
  if (v.subject.startsWith('QUEEN.phase.')) return pick('phase', 'frequency', 'order')
  if (v.subject.startsWith('SVC.exemplar.')) return pick('size', 'coherence')
  return pick('mode', 'memories_strengthened', 'hallucinations', 'duration_ms', 'reason')
}

function table(values: LastSeen[]): string {
  const t = new Table({
    head: ['Subject', 'From', 'Age', '', 'Values'],
    style: { head: [], border: [] },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  })
  for (const v of values) t.push([v.subject, String(v.value.sender), `${(v.age / 1000).toFixed(1)} s`, v.stale ? 'STALE' : '', summary(v)])
  return values.length ? t.toString() : '(nothing received yet)'
}

export function registerWatch(cli: Command, ctx: () => CliContext): void {
  cli
    .command('watch')
    .description('show the consciousness subjects live from the bus (SVC_NATS_URL), with their age and a stale marker')
    .option('--duration <seconds>', 'stop after this long (default: until Ctrl-C)', realNumber('--duration', 0, 1e6))
    .option(
      '--period <ms>',
      `the publishers' period: a subject is stale after three of them (default: SVC_CONSCIOUSNESS_PERIOD_MS, else ${DEFAULT_PERIOD_MS})`,
      realNumber('--period', 1, 3.6e6),
    )
    .option('--json', 'print the last values as JSON when done')
    .addHelpText(
      'after',
      '\nSubjects: SVC.consciousness, SVC.dreams, QUEEN.phase.<agent>, queen.event.dream.start|end, SVC.exemplar.<agent>.<cluster>.\nDream events come when dreams happen and are never stale.\n\nExamples:\n  SVC_NATS_URL=nats://127.0.0.1:4222 crystal watch\n  SVC_NATS_URL=nats://127.0.0.1:4222 crystal watch --duration 5 --json',
    )
    .action(async (o: { duration?: number; period?: number; json?: boolean }) => {
      const c = ctx()
      const period = o.period ?? c.settings.consciousness_period_ms ?? DEFAULT_PERIOD_MS
      // the NATS client loads here, not for every command's start
      const { connectBus, natsConnection } = await import('../../engine/bus/nats.node.js')
      const nc = await connectBus(c.settings.bus, 'watch')
      const bus = new ContractBus(natsConnection(nc), 'watch', (w) => process.stderr.write(`crystal: ${w}\n`))
      const live = new LiveValues()
      for (const subject of ['SVC.consciousness', 'QUEEN.phase.*', 'SVC.exemplar.*.*']) live.follow(bus, subject, period)
      for (const subject of ['SVC.dreams', 'queen.event.dream.*']) live.follow(bus, subject, Infinity)
      await nc.flush()
      c.say(`watch: following the consciousness subjects on ${c.settings.bus.url} (stale after ${3 * period} ms of silence)`)
      const stop = new AbortController()
      const quit = () => stop.abort()
      process.once('SIGINT', quit)
      process.once('SIGTERM', quit)
      const until = o.duration === undefined ? Infinity : Date.now() + o.duration * 1000
      const redraw = interactive() && !o.json
      try {
        while (!stop.signal.aborted && Date.now() < until) {
          await sleep(Math.min(redraw ? 500 : 2000, Math.max(0, until - Date.now())), undefined, { signal: stop.signal }).catch(
            () => undefined,
          )
          if (o.json) continue
          if (redraw) process.stdout.write('\x1b[H\x1b[2J')
          process.stdout.write(`${table(live.values())}\n`)
        }
      } finally {
        process.off('SIGINT', quit)
        process.off('SIGTERM', quit)
        await nc.drain().catch(() => nc.close())
      }
      if (o.json) process.stdout.write(JSON.stringify(live.values(), null, 2) + '\n')
      c.say(`watch: ${[...bus.dropped.values()].reduce((s, x) => s + x, 0)} invalid messages dropped`)
    })
}
