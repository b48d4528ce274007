// The Swarm view: the live nodes (processes and tabs) with their rounds, the discovery feed, and, in
// This tab mode, an Explore control that makes this tab one of the explorers, its rounds drawn as
// line charts (QD-score, best and mean fitness per generation), each round kept to compare. The other
// explorers' rounds are drawn the same way from their progress on the bus, one node at a time.
import { Fragment, useEffect, useRef, useState } from 'react'
import { SEARCH_DEFAULTS } from '../../engine/contracts/api.js'
import type { DiscoveredMessage, EventMessage as SwarmEvent, ExploreProgressMessage } from '../../engine/contracts/swarm.js'
import { archivesInWords } from '../../engine/discovery/archive.js'
import { useStore } from '../store'
import { Swarm } from '../swarm'
import { GenerationCharts, KEPT_RUNS, type ChartedRun } from './GenerationCharts'

interface NodeRow {
  node: string
  kind: string
  status: string
  round?: number
  material?: string
  seen: string
}

/** Another explorer's rounds with a generation more: a round that starts again at generation 1 (the node ran anew) starts afresh. */
function withGeneration(runs: readonly ChartedRun[], m: ExploreProgressMessage): ChartedRun[] {
  const key = String(m.round)
  const g = { generation: m.generation, best_fitness: m.best_fitness, mean_fitness: m.mean_fitness, qd_score: m.qd_score }
  const label = `${m.node} round ${m.round}: ${m.material} ${m.generations} generation${m.generations === 1 ? '' : 's'}`
  const kept = runs.filter((r) => r.key !== key)
  const before = runs.find((r) => r.key === key)
  const history = before && m.generation > 1 ? [...before.history, g] : [g]
  return [...kept, { key, label, history }].slice(-KEPT_RUNS)
}

export function SwarmView() {
  const driver = useStore((s) => s.driver)
  const [swarm, setSwarm] = useState<Swarm>()
  const [error, setError] = useState<string>()
  const [nodes, setNodes] = useState<Record<string, NodeRow>>({})
  const [feed, setFeed] = useState<DiscoveredMessage[]>([])
  const [form, setForm] = useState({
    material: 'diamond_nv',
    rounds: '1',
    // crystal explore's default
    generations: '3',
    population: '4',
    size: '24',
    seed: String(SEARCH_DEFAULTS.seed),
  })
  const [progress, setProgress] = useState<string[]>([])
  const [announced, setAnnounced] = useState<string[]>([])
  // this tab's explore rounds, the newest last, for the charts
  const [rounds, setRounds] = useState<ChartedRun[]>([])
  const runs = useRef(0)
  const [busy, setBusy] = useState(false)
  const joined = useRef<Swarm | undefined>(undefined)
  // the other explorers' rounds (processes and other tabs), by node, from their progress on the bus
  const [peerRounds, setPeerRounds] = useState<Record<string, ChartedRun[]>>({})
  const [chosenPeer, setChosenPeer] = useState<string>()
  const shownPeer = chosenPeer ?? Object.keys(peerRounds)[0]
  const shownRounds = shownPeer ? peerRounds[shownPeer] : undefined

  useEffect(() => {
    let stop: (() => void) | undefined
    Swarm.join().then(
      (s) => {
        joined.current = s
        setSwarm(s)
        stop = s.follow(
          (e: SwarmEvent) =>
            setNodes((n) => ({
              ...n,
              [e.node]: {
                node: e.node,
                kind: e.kind,
                status: e.event === 'node.left' ? 'left' : e.event,
                round: e.round ?? n[e.node]?.round,
                material: e.material ?? n[e.node]?.material,
                seen: new Date(e.ts).toLocaleTimeString(),
              },
            })),
          (m) => setFeed((f) => [m, ...f].slice(0, 50)),
          // this tab's own rounds are drawn from its search directly
          (m) => {
            if (m.node !== s.node) setPeerRounds((p) => ({ ...p, [m.node]: withGeneration(p[m.node] ?? [], m) }))
          },
        )
      },
      (e: Error) => setError(`not connected to the swarm: ${e.message}`),
    )
    return () => {
      stop?.()
      void joined.current?.leave()
    }
  }, [])

  const explore = async () => {
    if (!swarm) return
    setBusy(true)
    setError(undefined)
    const run = ++runs.current
    const say = (line: string) => setProgress((p) => [...p.slice(-8), line])
    try {
      swarm.event('node.joined')
      for (let round = 1; round <= Number(form.rounds); round++) {
        const settings = {
          material: form.material,
          generations: Number(form.generations),
          population: Number(form.population),
          size: Number(form.size),
          // as `crystal explore --seed S` does: round r searches with seed S + r - 1
          seed: Number(form.seed) + round - 1,
        }
        const key = `${run}.${round}`
        const label = `run ${run} round ${round}: ${settings.material} ${settings.generations}×${settings.population} N=${settings.size} seed ${settings.seed}`
        setRounds((rs) => [...rs, { key, label, history: [] }].slice(-KEPT_RUNS))
        const r = await swarm.round(round, settings, (g) => {
          setRounds((rs) => rs.map((x) => (x.key === key ? { ...x, history: [...x.history, g] } : x)))
          say(
            `round ${round}: generation ${g.generation} of ${g.generations}: best fitness ${g.best_fitness.toFixed(3)}, mean ${g.mean_fitness.toFixed(3)}, QD-score ${g.qd_score.toFixed(2)}`,
          )
        })
        // the round's line in the words of `crystal explore`
        say(
          `round ${round} (${settings.material}): registered ${r.registered.length}, ${r.result.rejected_duplicates} duplicates, best fitness ${r.result.best_fitness.toFixed(3)}; ${archivesInWords(r.result, r.result.registered_archive)}; merged ${r.merged} from the swarm, announced ${r.announced.length}`,
        )
        setAnnounced((a) => [...a, ...r.announced])
      }
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="swarm">
      {error && (
        <p className="error" role="alert" id="swarm-error">
          {error}
        </p>
      )}
      <section>
        <h3>Explore in this tab {swarm && <span className="muted">as {swarm.node}</span>}</h3>
        {driver.kind !== 'tab' && <p className="muted">Switch to This tab to explore with this tab's engine.</p>}
        {(['material', 'rounds', 'generations', 'population', 'size', 'seed'] as const).map((k) => (
          <label key={k}>
            {k}{' '}
            <input
              name={`swarm-${k}`}
              value={form[k]}
              onChange={(e) => setForm({ ...form, [k]: e.target.value })}
              size={k === 'material' ? 16 : 4}
            />
          </label>
        ))}
        <button disabled={!swarm || busy || driver.kind !== 'tab'} onClick={explore}>
          Explore
        </button>
        <pre data-testid="swarm-progress">{progress.join('\n')}</pre>
        {announced.length > 0 && (
          <p>
            <span className="muted">announced from this tab: </span>
            <span data-testid="swarm-announced">
              {announced.map((id, i) => (
                <Fragment key={id}>
                  {i > 0 && ' '}
                  <span className="nowrap">{id}</span>
                </Fragment>
              ))}
            </span>
          </p>
        )}
      </section>
      <section>
        <h3>Nodes</h3>
        {Object.keys(nodes).length === 0 && (
          <p className="muted" data-testid="swarm-nodes-empty">
            {swarm
              ? 'No node has spoken since this page opened: explorers announce themselves when they join and at each round.'
              : 'Not connected to the bus: no nodes to show.'}
          </p>
        )}
        <table data-testid="swarm-nodes" hidden={Object.keys(nodes).length === 0}>
          <thead>
            <tr>
              <th>Node</th>
              <th>Kind</th>
              <th>Status</th>
              <th>Round</th>
              <th>Material</th>
              <th>Last seen</th>
            </tr>
          </thead>
          <tbody>
            {Object.values(nodes).map((n) => (
              <tr key={n.node}>
                <td>{n.node}</td>
                <td>{n.kind}</td>
                <td>{n.status}</td>
                <td>{n.round ?? '-'}</td>
                <td>{n.material ?? '-'}</td>
                <td>{n.seen}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section>
        <h3>Discoveries</h3>
        {feed.length === 0 && (
          <p className="muted" data-testid="swarm-feed-empty">
            {swarm
              ? 'None since this page opened: a discovery appears when an explorer (`crystal explore` with SVC_NATS_URL, or Explore in a tab) registers a primitive and announces it on the bus.'
              : 'Not connected to the bus, so no discoveries can arrive here: a tab joins the swarm through the websocket address the server is given in SVC_NATS_WS_URL (docs/swarm.md).'}
          </p>
        )}
        <ul data-testid="swarm-feed">
          {feed.map((m) => (
            <li key={m.primitive.uuid}>
              {m.sender}: {m.primitive.id} {m.primitive.class} ({m.primitive.material}), persistence{' '}
              {(100 * m.primitive.persistence).toFixed(1)}%
            </li>
          ))}
        </ul>
      </section>
      {rounds.length > 0 && (
        <section className="rounds">
          <h3>This tab's rounds</h3>
          <GenerationCharts testId="swarm" unit="round" runs={rounds} current={rounds[rounds.length - 1].key} />
        </section>
      )}
      <section className="rounds">
        <h3>Explorers' rounds</h3>
        {!shownRounds ? (
          <p className="muted" data-testid="swarm-peers-empty">
            {swarm
              ? 'No other explorer has finished a generation since this page opened: each explorer tells the swarm the figures of every generation of its rounds.'
              : 'Not connected to the bus: no rounds to show.'}
          </p>
        ) : (
          <>
            <label>
              node{' '}
              <select name="swarm-peer" value={shownPeer} onChange={(e) => setChosenPeer(e.target.value)}>
                {Object.keys(peerRounds).map((node) => (
                  <option key={node} value={node}>
                    {node}
                  </option>
                ))}
              </select>
            </label>
            <GenerationCharts testId="swarm-peer" unit="round" runs={shownRounds} current={shownRounds[shownRounds.length - 1].key} />
          </>
        )}
      </section>
    </div>
  )
}
