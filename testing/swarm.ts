// What the swarm's tests share (cli/swarm.test.ts against processes, e2e/swarm.test.ts with a browser
// tab too): the announcement floor they run under, and the small search a round that keeps them short.
import { heldPrimitives, runCrystal } from './services.js'

/** The persistence at and above which the tests' explorers announce what they find. */
export const FLOOR = 0.3

/** Runs the CLI under the tests' announcement floor (`env` on top). */
export const runAnnouncing = (env: Record<string, string>, ...args: string[]) =>
  runCrystal(args, { SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE: String(FLOOR), ...env })

/** What an explorer found itself and should have announced: its own finds at or above the floor. */
export const ownAnnounceable = (dir: string) => heldPrimitives(dir).filter((p) => p.provenance === null && p.persistence >= FLOOR)

/** `crystal explore`'s flags for `rounds` rounds of a small search each (1 generation of 6 at N = 32), a JSON line a round. */
export const smallRounds = (rounds: number, interval = 0) => [
  ...['--rounds', String(rounds), '--interval', String(interval)],
  ...['--generations', '1', '--population', '6', '--size', '32', '--json'],
]

/** An explorer process: its material, node name and data directory. */
export interface Explorer {
  material: string
  node: string
  dir: string
}

/** Every explorer a `crystal explore` process of `rounds` small rounds on the bus at `natsUrl`, all at once. */
export const exploreTogether = (natsUrl: string, explorers: readonly Explorer[], rounds = 2) =>
  Promise.all(
    explorers.map((e) =>
      runAnnouncing(
        { SVC_NATS_URL: natsUrl, SVC_CRYSTAL_NODE: e.node, SVC_CRYSTAL_DATA_DIR: e.dir },
        ...['explore', '--material', e.material, ...smallRounds(rounds)],
      ),
    ),
  )
