// The Markets tab: the prediction markets sorted by volume, one market's price history as a chart,
// a trade form that quotes the cost before buying, and the leaderboard. Money shows in units (2 decimals).
import { useEffect, useState } from 'react'
import type { AgentReply, MarketReply } from '../../engine/contracts/markets'
import { get, post } from '../api'

const COLOURS = ['#f5b942', '#6fa8ff', '#e0607e', '#7fd18b', '#c39bff', '#5fd6d6', '#ff9f5a', '#b0b8c6']
const money = (minor: number) => (minor / 100).toFixed(2)
const W = 520
const H = 200
const PAD = { left: 40, right: 10, top: 10, bottom: 26 }

interface Row {
  rank: number
  id: string
  display_name: string
  balance: number
  reputation: { skill: number; mean_brier: number | null; markets: number }
}

function PriceChart({ market }: { market: MarketReply }) {
  const h = market.history ?? []
  if (h.length < 2)
    return (
      <p className="muted" data-testid="price-chart">
        No trades yet: every outcome stands at 1/{market.outcomes.length}.
      </p>
    )
  const t0 = Date.parse(h[0].ts)
  const t1 = Math.max(Date.parse(h[h.length - 1].ts), t0 + 1)
  const sx = (ts: string) => PAD.left + ((Date.parse(ts) - t0) / (t1 - t0)) * (W - PAD.left - PAD.right)
  const sy = (p: number) => H - PAD.bottom - p * (H - PAD.top - PAD.bottom)
  // prices hold until the next trade: a step line
  const path = (k: number) =>
    h.map((x, i) => (i === 0 ? `M${sx(x.ts)},${sy(x.prices[k])}` : `H${sx(x.ts)} V${sy(x.prices[k])}`)).join(' ') + ` H${W - PAD.right}`
  return (
    <div className="chart" data-testid="price-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label="price history">
        {[0, 0.25, 0.5, 0.75, 1].map((p) => (
          <g key={p}>
            <line x1={PAD.left} x2={W - PAD.right} y1={sy(p)} y2={sy(p)} className="grid" />
            <text x={PAD.left - 6} y={sy(p) + 4} textAnchor="end">
              {p.toFixed(2)}
            </text>
          </g>
        ))}
        <text x={PAD.left} y={H - 8}>
          {new Date(t0).toLocaleString()}
        </text>
        <text x={W - PAD.right} y={H - 8} textAnchor="end">
          {new Date(t1).toLocaleString()}
        </text>
        {market.outcomes.map((o, k) => (
          <path key={o} d={path(k)} fill="none" stroke={COLOURS[k % COLOURS.length]} strokeWidth={1.6} />
        ))}
      </svg>
      <div className="legend">
        {market.outcomes.map((o, k) => (
          <span key={o} style={{ color: COLOURS[k % COLOURS.length] }}>
            {o} {market.prices[k].toFixed(3)}
          </span>
        ))}
      </div>
    </div>
  )
}

function TradeForm({ market, onTraded }: { market: MarketReply; onTraded: () => void }) {
  const [trader, setTrader] = useState(() => localStorage.getItem('markets.trader') ?? '')
  const [token, setToken] = useState(() => localStorage.getItem('markets.token') ?? '')
  const [outcome, setOutcome] = useState(market.outcomes[0])
  const [shares, setShares] = useState('10')
  const [quoted, setQuoted] = useState<string>('')
  const [result, setResult] = useState<string>('')
  const [error, setError] = useState<string>('')
  const n = Number(shares)
  // whether fractions are allowed is the server's rule: it names it when it refuses one
  const valid = shares.trim() !== '' && Number.isFinite(n) && n !== 0

  useEffect(() => setOutcome((o) => (market.outcomes.includes(o) ? o : market.outcomes[0])), [market.id, market.outcomes])
  useEffect(() => {
    if (!valid || market.status !== 'open') return setQuoted('')
    let live = true
    get<{ cost: number; prices_after: number[] }>(
      `/api/markets/${market.id}/quote?outcome=${encodeURIComponent(outcome)}&shares=${n}`,
    ).then(
      (q) =>
        live &&
        setQuoted(
          `${q.cost >= 0 ? 'costs' : 'pays you'} ${money(Math.abs(q.cost))}; ${outcome} then at ${q.prices_after[market.outcomes.indexOf(outcome)].toFixed(3)}`,
        ),
      (e: Error) => live && setQuoted(e.message),
    )
    return () => {
      live = false
    }
  }, [market.id, market.status, market.trades, outcome, n, valid, market.outcomes])

  const remember = (id: string, t: string) => {
    setTrader(id)
    setToken(t)
    localStorage.setItem('markets.trader', id)
    localStorage.setItem('markets.token', t)
  }
  const register = async () => {
    setError('')
    try {
      const r = await post<{ agent: AgentReply; token: string }>('/api/agents/register', {
        display_name: trader || 'Observatory trader',
        kind: 'human',
        ...(trader ? { id: trader } : {}),
      })
      remember(r.agent.id, r.token)
      setResult(`registered ${r.agent.id} with ${money(r.agent.balance)}; its token is kept in this browser (it is shown only once)`)
    } catch (e) {
      setError((e as Error).message)
    }
  }
  const trade = async (e: React.FormEvent) => {
    e.preventDefault()
    setError('')
    try {
      const r = await post<{ cost: number; balance: number; shares: number }>(
        `/api/markets/${market.id}/trade`,
        { trader_id: trader, outcome, shares: n },
        { authorization: `Bearer ${token}` },
      )
      setResult(
        `${r.shares > 0 ? 'bought' : 'sold'} ${Math.abs(r.shares)} ${outcome} for ${money(Math.abs(r.cost))}; balance ${money(r.balance)}`,
      )
      onTraded()
    } catch (err) {
      setError((err as Error).message)
    }
  }
  return (
    <form onSubmit={trade} aria-label="trade">
      <h3>Trade</h3>
      <label>
        trader id <input name="trader" value={trader} onChange={(e) => remember(e.target.value, token)} />
        <button type="button" onClick={register}>
          Register
        </button>
      </label>
      <label>
        outcome{' '}
        <select name="outcome" value={outcome} onChange={(e) => setOutcome(e.target.value)}>
          {market.outcomes.map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
      </label>
      <label>
        shares (negative sells) <input name="shares" value={shares} onChange={(e) => setShares(e.target.value)} size={8} />
      </label>
      <p data-testid="quote">{market.status !== 'open' ? `this market is ${market.status}` : valid ? quoted : 'shares: a number, not 0'}</p>
      <button type="submit" disabled={!valid || !token || market.status !== 'open'}>
        {n < 0 ? 'Sell' : 'Buy'}
      </button>
      {result && <p data-testid="trade-result">{result}</p>}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </form>
  )
}

/** A datetime-local value a week from now (the form's default closing time). */
const inAWeek = () => {
  const d = new Date(Date.now() + 7 * 86_400_000)
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}

/**
 * Opens a market (POST /api/markets): a labs market with the oracle token (HUB_ORACLE_TOKEN, kept in
 * this browser's session only), or a play market escrowed from the registered trader's balance.
 */
function CreateMarket({ onCreated }: { onCreated: (id: string) => void }) {
  const [form, setForm] = useState({ question: '', outcomes: 'yes, no', tier: 'labs', closes: inAWeek(), b: '100', category: '' })
  const [oracle, setOracle] = useState(() => sessionStorage.getItem('markets.oracle') ?? '')
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const set = (k: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) =>
    setForm({ ...form, [k]: e.target.value })
  const create = async (e: React.FormEvent) => {
    e.preventDefault()
    setError('')
    const token = form.tier === 'labs' ? oracle : (localStorage.getItem('markets.token') ?? '')
    if (!token)
      return setError(
        form.tier === 'labs'
          ? 'a labs market needs the oracle token (HUB_ORACLE_TOKEN)'
          : "a play market is paid from a trader: register one in a market's trade form first",
      )
    setBusy(true)
    try {
      const body = {
        question: form.question,
        outcomes: form.outcomes
          .split(',')
          .map((o) => o.trim())
          .filter(Boolean),
        tier: form.tier,
        closes_at: new Date(form.closes).toISOString(),
        ...(form.b.trim() ? { b: Number(form.b) } : {}),
        ...(form.category.trim() ? { category: form.category.trim() } : {}),
      }
      const m = await post<MarketReply>('/api/markets', body, { authorization: `Bearer ${token}` })
      setForm({ ...form, question: '' })
      onCreated(m.id)
    } catch (err) {
      setError((err as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form onSubmit={create} aria-label="open a market" aria-describedby="create-market-error">
      <h3>Open a market</h3>
      <label>
        question <input name="question" value={form.question} onChange={set('question')} size={40} required />
      </label>
      <label>
        outcomes (comma-separated) <input name="outcomes" value={form.outcomes} onChange={set('outcomes')} size={30} />
      </label>
      <label>
        tier{' '}
        <select name="tier" value={form.tier} onChange={set('tier')}>
          <option value="labs">labs (the oracle opens and resolves it)</option>
          <option value="play">play (escrowed from your trader)</option>
        </select>
      </label>
      <label>
        closes <input type="datetime-local" name="closes" value={form.closes} onChange={set('closes')} />
      </label>
      <label>
        liquidity b <input name="b" value={form.b} onChange={set('b')} size={6} inputMode="decimal" />
      </label>
      <label>
        category <input name="category" value={form.category} onChange={set('category')} size={16} />
      </label>
      {form.tier === 'labs' && (
        <label>
          oracle token{' '}
          <input
            type="password"
            name="oracle-token"
            autoComplete="off"
            value={oracle}
            onChange={(e) => (setOracle(e.target.value), sessionStorage.setItem('markets.oracle', e.target.value))}
          />
        </label>
      )}
      <button type="submit" disabled={busy}>
        Open
      </button>
      {error && (
        <p className="error" role="alert" id="create-market-error">
          {error}
        </p>
      )}
    </form>
  )
}

export function Markets() {
  const [markets, setMarkets] = useState<MarketReply[]>([])
  const [selected, setSelected] = useState<string | undefined>()
  const [market, setMarket] = useState<MarketReply | undefined>()
  const [board, setBoard] = useState<Row[]>([])
  const [error, setError] = useState('')
  const [tick, setTick] = useState(0)

  useEffect(() => {
    const refresh = () => setTick((t) => t + 1)
    const timer = setInterval(refresh, 3000)
    return () => clearInterval(timer)
  }, [])
  useEffect(() => {
    Promise.all([get<MarketReply[]>('/api/markets?sort=volume'), get<Row[]>('/api/leaderboard')]).then(
      ([m, b]) => (setMarkets(m), setBoard(b), setError('')),
      (e: Error) => setError(e.message),
    )
    if (selected) get<MarketReply>(`/api/markets/${selected}`).then(setMarket, (e: Error) => setError(e.message))
  }, [tick, selected])

  return (
    <div className="markets">
      <div>
        <section>
          <h3>
            Markets <span className="muted">by volume</span>
          </h3>
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          {markets.length === 0 ? (
            <p className="muted" data-testid="markets-empty">
              No markets yet: open one below (a labs market with the oracle token, a play market from your trader's balance), or propose one
              (POST /api/proposals).
            </p>
          ) : (
            <table data-testid="markets">
              <thead>
                <tr>
                  <th>question</th>
                  <th>tier</th>
                  <th>status</th>
                  <th>leading / settled</th>
                  <th className="num">volume</th>
                  <th className="num">trades</th>
                </tr>
              </thead>
              <tbody>
                {markets.map((m) => {
                  // a settled market shows what it settled to; an open one its favourite
                  const by = m.resolution ?? m.prices
                  const lead = by.indexOf(Math.max(...by))
                  return (
                    <tr key={m.id} className={m.id === selected ? 'selected' : ''}>
                      <td>
                        <button className="link" onClick={() => setSelected(m.id)}>
                          {m.question}
                        </button>
                      </td>
                      <td>{m.tier}</td>
                      <td>{m.status}</td>
                      <td>
                        {m.outcomes[lead]} {by[lead].toFixed(2)}
                        {m.resolution ? ' (settled)' : ''}
                      </td>
                      <td className="num">{money(m.volume)}</td>
                      <td className="num">{m.trades}</td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          )}
          <CreateMarket onCreated={(id) => (setSelected(id), setTick((t) => t + 1))} />
        </section>
        <section>
          <h3>
            Leaderboard <span className="muted">Brier skill over resolved markets, then balance</span>
          </h3>
          {board.length === 0 && (
            <p className="muted" data-testid="leaderboard-empty">
              No traders yet: register one in a market's trade form; skill counts once a market they traded in is resolved.
            </p>
          )}
          <table data-testid="leaderboard" hidden={board.length === 0}>
            <thead>
              <tr>
                <th>#</th>
                <th>trader</th>
                <th className="num">skill</th>
                <th className="num">markets</th>
                <th className="num">balance</th>
              </tr>
            </thead>
            <tbody>
              {board.map((r) => (
                <tr key={r.id}>
                  <td>{r.rank}</td>
                  <td>
                    {r.display_name} <span className="muted">{r.id}</span>
                  </td>
                  <td className="num">{r.reputation.skill.toFixed(3)}</td>
                  <td className="num">{r.reputation.markets}</td>
                  <td className="num">{money(r.balance)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </div>
      <section data-testid="market-detail">
        {market && market.id === selected ? (
          <>
            <h3>
              {market.question}{' '}
              <span className="muted">
                {market.id} · {market.tier} · {market.status} · closes {new Date(market.closes_at).toLocaleString()}
              </span>
            </h3>
            <PriceChart market={market} />
            <TradeForm market={market} onTraded={() => setTick((t) => t + 1)} />
          </>
        ) : (
          <p className="muted">Choose a market to see its price history and trade.</p>
        )}
      </section>
    </div>
  )
}
