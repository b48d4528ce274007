// The Observatory: a tab bar (the field, Primitives, Swarm; a new domain adds its view to TABS) over
// the live field, its decay timeline and the controls. Mode: the server's engine or the tab's own.
import { useEffect, useRef, useState } from 'react'
import { decodeField, type FieldWire, type State } from '../engine/contracts/api.js'
import { follow, get } from './api'
import { resumeIn, serverDriver, TabDriver, TabEngine } from './driver'
import type { TabBackend } from './tab'
import { pulseNumbers, useStore } from './store'
import { Ask } from './views/Ask'
import { Controls } from './views/Controls'
import { Lab } from './views/Lab'
import { Markets } from './views/Markets'
import { Primitives } from './views/Primitives'
import { SwarmView } from './views/SwarmView'
import { FieldView } from './views/FieldView'
import { Timeline } from './views/Timeline'

const TABS = ['Observatory', 'Primitives', 'Markets', 'Swarm'] as const

export function App() {
  const state = useStore((s) => s.state)
  const setState = useStore((s) => s.setState)
  const setError = useStore((s) => s.setError)
  const feedError = useStore((s) => s.errors.feed)
  const pulse = useStore((s) => s.pulse)
  const setJob = useStore((s) => s.setJob)
  const [tab, setTab] = useState<(typeof TABS)[number]>('Observatory')
  const [tabBackend, setTabBackend] = useState<TabBackend>('gpu')
  // each switch takes a number: an engine that finishes starting after a later switch is discarded
  const switches = useRef(0)

  const driver = useStore((s) => s.driver)
  const engine = useStore((s) => s.engine)
  const setDriver = useStore((s) => s.setDriver)

  // the server's states arrive on its feed; in This tab mode the tab's driver publishes instead
  useEffect(
    () =>
      follow(
        128,
        (s) => (useStore.getState().driver.kind === 'server' ? setState(s) : undefined, setError('feed', undefined)),
        (m) => setError('feed', m),
        setJob,
      ),
    [setState, setError, setJob],
  )

  const switchTo = async (kind: 'server' | 'tab', prefer: TabBackend = tabBackend) => {
    const current = useStore.getState().driver
    // (while a tab engine starts, the placeholder is the server driver: Server must still take its turn)
    if (kind === 'tab' && current.kind === 'tab' && prefer === tabBackend) return
    // the tab's field cannot move to the server: leaving it throws it away, so ask first when it holds anything
    if (kind === 'server' && current instanceof TabDriver && (current.engine.mirror.step_count > 0 || current.engine.mirror.memories > 0)) {
      const e = current.engine.mirror
      const gone = `step ${e.step_count}, ${e.memories} ${e.memories === 1 ? 'memory' : 'memories'}`
      if (!window.confirm(`Switch to the server's engine? This tab's field (${gone}) cannot move to the server and will be discarded.`))
        return
    }
    const turn = ++switches.current
    if (kind === 'server') {
      current.close()
      setDriver(serverDriver, 'Server')
      // the feed only speaks on change: fetch the server's field now rather than keep showing the tab's
      get<State>('/crystal/state?size=128').then(setState, (e: Error) => setError('feed', e.message))
      return
    }
    // a tab engine switching backend carries its field across; from the server, the tab takes the server's field
    const from = current instanceof TabDriver ? current : undefined
    if (!from) current.close()
    setDriver(from ?? serverDriver, `This tab · starting the engine ...`)
    let e: TabEngine | undefined
    try {
      const server = from ? undefined : decodeField(await get<FieldWire>('/crystal/field'))
      const was = from?.engine.mirror ?? server!
      e = await TabEngine.open(was.size, was.material, 1, prefer)
      if (turn !== switches.current) return e.destroy()
      const origin = from
        ? `carried over from ${from.engine.mirror.backend === 'gpu' ? 'WebGPU' : 'the CPU twin'} at step ${was.step_count}`
        : `carried from the server at step ${was.step_count}`
      if (from) await from.carryTo(e)
      else await resumeIn(e, server!)
      if (turn !== switches.current) return e.destroy()
      from?.close()
      const tab = new TabDriver(e, setState)
      setDriver(tab, `This tab · ${e.mirror.backend_reason} · ${origin}`)
      e = undefined // the driver holds it now
      await tab.show()
    } catch (err) {
      e?.destroy()
      if (turn !== switches.current) return
      from?.close()
      setDriver(serverDriver, 'Server')
      setError('feed', `This tab could not start an engine: ${(err as Error).message}`)
    }
  }

  const place = (x: number, y: number) => {
    setError('pulse', undefined)
    driver.pulse({ ...pulseNumbers(pulse), x, y }).catch((e: Error) => setError('pulse', e.message))
  }

  return (
    <div className="app">
      <header>
        <h1>Resonant Crystal</h1>
        <div className="views" role="tablist" aria-label="views">
          {TABS.map((t) => (
            <button key={t} role="tab" aria-selected={tab === t} onClick={() => setTab(t)}>
              {t}
            </button>
          ))}
        </div>
        <fieldset className="switch" aria-label="which engine">
          <button aria-pressed={driver.kind === 'server'} onClick={() => switchTo('server')}>
            Server
          </button>
          <button aria-pressed={driver.kind === 'tab'} onClick={() => switchTo('tab')}>
            This tab
          </button>
        </fieldset>
        <label className="muted">
          tab engine{' '}
          <select
            name="tab-backend"
            value={tabBackend}
            onChange={(e) => {
              const prefer = e.target.value as TabBackend
              setTabBackend(prefer)
              if (driver.kind === 'tab') void switchTo('tab', prefer)
            }}
          >
            <option value="gpu">WebGPU</option>
            <option value="cpu">CPU (WebAssembly)</option>
          </select>
        </label>
        <span
          className="mode"
          data-testid="mode"
          title={`${engine}${state ? ` · ${state.backend} · ${state.material} · N = ${state.field_size}` : ''}`}
        >
          {engine}
          {state ? ` · ${state.backend} · ${state.material} · N = ${state.field_size}` : ''}
        </span>
      </header>
      {feedError && (
        <p className="error" role="alert">
          {feedError}
        </p>
      )}
      <main hidden={tab !== 'Observatory'}>
        <section className="view">
          <FieldView state={state} onPick={place} />
          <p className="status" data-testid="status">
            {state
              ? `step ${state.step} · ${state.memories} ${state.memories === 1 ? 'memory' : 'memories'} · energy ${state.books.energy.toPrecision(4)}`
              : 'connecting to the field ...'}
          </p>
          <Timeline points={state ? [...state.timeline, state.books] : []} />
          <Lab />
        </section>
        <aside>
          <Controls />
          <Ask />
        </aside>
      </main>
      {tab === 'Primitives' && <Primitives />}
      {tab === 'Markets' && <Markets />}
      {tab === 'Swarm' && <SwarmView />}
    </div>
  )
}
