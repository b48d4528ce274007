// The Observatory: a tab bar (room for the Primitives, Markets, Swarm and Station views later issues
// add) over the live field, its decay timeline and the controls. Mode: the server's engine.
import { useEffect, useState } from 'react'
import { follow, post } from './api'
import { useStore } from './store'
import { Controls } from './views/Controls'
import { Lab } from './views/Lab'
import { Primitives } from './views/Primitives'
import { FieldView } from './views/FieldView'
import { Timeline } from './views/Timeline'

const TABS = ['Observatory', 'Primitives'] as const

export function App() {
  const state = useStore((s) => s.state)
  const setState = useStore((s) => s.setState)
  const setError = useStore((s) => s.setError)
  const feedError = useStore((s) => s.errors.feed)
  const pulse = useStore((s) => s.pulse)
  const setJob = useStore((s) => s.setJob)
  const [tab, setTab] = useState<(typeof TABS)[number]>('Observatory')

  useEffect(() => follow(128, (s) => (setState(s), setError('feed', undefined)), (m) => setError('feed', m), setJob), [setState, setError, setJob])

  const place = (x: number, y: number) => {
    setError('pulse', undefined)
    post('/crystal/pulse', { x, y, ...pulse }).catch((e: Error) => setError('pulse', e.message))
  }

  return (
    <div className="app">
      <header>
        <h1>Resonant Crystal</h1>
        <nav role="tablist" aria-label="views">
          {TABS.map((t) => (
            <button key={t} role="tab" aria-selected={tab === t} onClick={() => setTab(t)}>
              {t}
            </button>
          ))}
        </nav>
        <span className="mode" data-testid="mode">
          Server{state ? ` · ${state.backend} · ${state.material} · N = ${state.field_size}` : ''}
        </span>
      </header>
      {feedError && <p className="error" role="alert">{feedError}</p>}
      <main hidden={tab !== 'Observatory'}>
        <section className="view">
          <FieldView state={state} onPick={place} />
          <p className="status" data-testid="status">
            {state ? `step ${state.step} · ${state.memories} ${state.memories === 1 ? 'memory' : 'memories'} · energy ${state.books.energy.toPrecision(4)}` : 'connecting to the field ...'}
          </p>
          <Timeline points={state?.timeline ?? []} />
          <Lab />
        </section>
        <aside>
          <Controls />
        </aside>
      </main>
      {tab === 'Primitives' && <Primitives />}
    </div>
  )
}
