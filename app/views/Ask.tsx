// Asking the live field (docs/recall.md): RECALL ranks the memories the field still resonates with,
// PROBE reads one text's resonance. Each score is drawn as a bar against its own noise floor; when
// nothing resonates the field's reason is shown instead of an empty list.
import { useState } from 'react'
import type { ProbeResult, RecallHit, RecallResult } from '../../engine/contracts/api.js'
import { useStore } from '../store'
import { ErrorLine, useAction } from './Controls'

/** A hit as recall reports it; `match` and `strength` arrive with the newer recall (score equals match). */
type Hit = RecallHit & { match?: number; strength?: number }

/**
 * One score as a bar on a scale from 0 to `top` (a native meter, clamped there as the bar is), with its
 * noise floor as a tick across it. The meter's low and high bounds are the floor, its optimum the top,
 * so assistive technology hears what the colour says: above the floor or below it.
 */
export function ScoreBar({ label, value, floor, top }: { label: string; value: number; floor: number; top: number }) {
  const at = (v: number) => `${(100 * Math.max(0, Math.min(v, top))) / top}%`
  const above = value > floor
  return (
    <div className={`bar ${above ? 'above' : 'below'}`} title={`${label} ${value.toPrecision(3)}, noise floor ${floor.toPrecision(3)}`}>
      <meter aria-label={label} min={0} max={top} low={floor} high={floor} optimum={top} value={value} />
      <span className="floor" style={{ left: at(floor) }} />
    </div>
  )
}

/** The bars share one scale: 1 is a memory the field holds in full; a larger score stretches it. */
const scaleTop = (values: number[]) => Math.max(1, ...values)

function RecallHits({ result }: { result: RecallResult }) {
  const hits = result.hits as Hit[]
  const top = scaleTop(hits.flatMap((h) => [h.match ?? h.score, h.strength ?? 0, h.noise_floor]))
  return (
    <div data-testid="recall-result">
      {result.reason && (
        <p className={hits.length ? 'warning' : 'muted'} data-testid="recall-reason">
          {result.reason}
        </p>
      )}
      {hits.length > 0 && (
        <ol className="hits">
          {hits.map((h) => {
            const match = h.match ?? h.score
            return (
              <li key={h.memory}>
                <span className="hit-text">
                  “{h.text}”{' '}
                  <span className="muted">
                    written at step {h.step}, importance {h.importance}
                  </span>
                </span>
                <ScoreBar label={`match of “${h.text}”`} value={match} floor={h.noise_floor} top={top} />
                {h.strength !== undefined && (
                  <ScoreBar label={`strength of “${h.text}”`} value={h.strength} floor={h.noise_floor} top={top} />
                )}
                <span className="muted figures">
                  match {match.toFixed(3)}
                  {h.strength !== undefined && ` · strength ${h.strength.toFixed(3)}`} · floor {h.noise_floor.toFixed(3)}
                </span>
              </li>
            )
          })}
        </ol>
      )}
      <p className="muted">
        {result.memories} {result.memories === 1 ? 'memory' : 'memories'} in the field
        {result.capacity !== null && ` · it can tell apart about ${result.capacity}`}
      </p>
    </div>
  )
}

function ProbeReading({ text, result }: { text: string; result: ProbeResult }) {
  const above = result.resonance > result.noise_floor
  return (
    <div data-testid="probe-result">
      <ScoreBar
        label={`resonance of “${text}”`}
        value={result.resonance}
        floor={result.noise_floor}
        top={scaleTop([result.resonance, result.noise_floor])}
      />
      <p className={above ? undefined : 'muted'}>
        {`“${text}” resonates ${result.resonance.toFixed(3)} against a noise floor of ${result.noise_floor.toFixed(3)}: `}
        {above ? 'the field holds it' : 'below the floor, the field does not hold it'}
        {result.step === null ? ' (read at the present: nothing has been written)' : ` (best at the write of step ${result.step})`}
      </p>
    </div>
  )
}

export function Ask() {
  const driver = useStore((s) => s.driver)
  const ask = useAction('ask')
  const [text, setText] = useState('glyph')
  const [k, setK] = useState('5')
  const [answer, setAnswer] = useState<{ kind: 'recall'; result: RecallResult } | { kind: 'probe'; text: string; result: ProbeResult }>()
  const recall = () => ask.run(async () => setAnswer({ kind: 'recall', result: await driver.recall(text, Number(k)) }))
  const probe = () => ask.run(async () => setAnswer({ kind: 'probe', text, result: await driver.probe(text) }))
  return (
    <div className="controls">
      <form className="ask" aria-describedby="ask-error" onSubmit={(e) => (e.preventDefault(), recall())}>
        <h3>
          Ask the field <span className="muted">(recall, probe)</span>
        </h3>
        <label>
          query <input name="query" value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <label>
          hits <input name="k" value={k} onChange={(e) => setK(e.target.value)} inputMode="numeric" size={4} />
        </label>
        <button type="submit" disabled={ask.busy}>
          Recall
        </button>
        <button type="button" disabled={ask.busy} onClick={probe}>
          Probe
        </button>
        <ErrorLine id="ask-error" error={ask.error} />
        {answer?.kind === 'recall' && <RecallHits result={answer.result} />}
        {answer?.kind === 'probe' && <ProbeReading text={answer.text} result={answer.result} />}
      </form>
    </div>
  )
}
