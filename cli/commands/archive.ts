// `crystal archive`: merges every discovery the swarm announced into the local registry, including
// those announced before it started (they are kept in a JetStream stream), then follows live until
// stopped. Each uuid is kept once; malformed or foreign messages are dropped with a warning.
import type { JsMsg } from '@nats-io/jetstream'
import type { Command } from 'commander'
import { DISCOVERY_STREAM, readAnnouncement, type DiscoveredMessage } from '../../engine/contracts/swarm.js'
import { inBatches } from '../../engine/swarm/archivist.js'
import { importCandidate } from '../../engine/swarm/import.js'
import { ensureDiscoveryStream } from '../../engine/swarm/rounds.js'
import type { CliContext } from '../context.js'

/** At most this many announcements go into one registry write. */
const MAX_BATCH = 500

export function registerArchive(cli: Command, ctx: () => CliContext): void {
  cli
    .command('archive')
    .description('merge every discovery of the swarm into the registry (from NATS: SVC_NATS_URL), then follow live')
    .option('--catch-up', 'stop once everything announced so far is merged, instead of following live')
    .option('--json', 'one JSON line per message on stdout')
    .addHelpText(
      'after',
      '\nNeeds SVC_NATS_URL (and SVC_NATS_CREDS for a credentials file). Announcements are kept in the\nJetStream stream SVC_CRYSTAL_DISCOVERIES, so an archivist started late still gets them all.\n\nExamples:\n  SVC_NATS_URL=nats://127.0.0.1:4222 crystal archive\n  SVC_NATS_URL=nats://127.0.0.1:4222 crystal archive --catch-up --json',
    )
    .action(async (o: { catchUp?: boolean; json?: boolean }) => {
      const c = ctx()
      // the NATS client loads here, not for every command's start
      const [{ jetstream, jetstreamManager }, { connectBus }] = await Promise.all([
        import('@nats-io/jetstream'),
        import('../../engine/bus/nats.node.js'),
      ])
      const nc = await connectBus(c.settings.bus, 'archive')
      const counts = { merged: 0, already_held: 0, dropped: 0 }
      try {
        const jsm = await jetstreamManager(nc)
        await ensureDiscoveryStream(jsm)
        const held = (await jsm.streams.info(DISCOVERY_STREAM)).state.messages
        c.say(`archive: ${held} announcement${held === 1 ? '' : 's'} held in ${DISCOVERY_STREAM}; merging into ${c.dataDir}`)
        if (o.catchUp && held === 0) return
        await c.writable()
        const registry = c.registry()
        const merge = async (taken: DiscoveredMessage[]) => {
          const out = await registry.register(
            taken.map((m) => importCandidate(m, new Date())),
            { novelty: false },
          )
          taken.forEach((message, i) => {
            const id = out.assigned[i]
            const rejected = out.rejected.find((r) => r.index === i)
            const line = id
              ? { merged: id, uuid: message.primitive.uuid, node: message.sender, origin_id: message.primitive.id }
              : { already_held: rejected?.duplicate_of ?? null, uuid: message.primitive.uuid, node: message.sender }
            if ('merged' in line) counts.merged++
            else counts.already_held++
            if (o.json) process.stdout.write(JSON.stringify(line) + '\n')
            else
              process.stdout.write(
                'merged' in line
                  ? `merged ${line.origin_id} from ${line.node} as ${line.merged}\n`
                  : `already held: ${line.uuid} (as ${line.already_held})\n`,
              )
          })
          for (const p of out.pruned) c.say(`archive: the caps removed ${p.id} (${p.reason})`)
        }
        const messages = await (await jetstream(nc).consumers.get(DISCOVERY_STREAM)).consume()
        const stop = () => messages.stop()
        process.once('SIGINT', stop)
        process.once('SIGTERM', stop)
        const announcements = async function* () {
          for await (const m of messages as AsyncIterable<JsMsg>) {
            const read = readAnnouncement(m)
            if ('error' in read) {
              counts.dropped++
              process.stderr.write(`crystal: warning: dropped a malformed message on ${m.subject} (seq ${m.seq}): ${read.error}\n`)
            } else yield read.message
            if (o.catchUp && m.info.pending === 0) break
          }
        }
        await inBatches(announcements(), merge, MAX_BATCH)
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
      } finally {
        await nc.drain().catch(() => nc.close())
        c.say(`archive: merged ${counts.merged}, already held ${counts.already_held}, dropped ${counts.dropped}`)
      }
    })
}
