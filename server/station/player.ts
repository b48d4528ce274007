// The /player page: one self-contained page (no bundle) that plays /stream and shows /api/state every
// second: now playing, block, up next, listeners, and the swarm's phi / xi / order with age and staleness.
export const PLAYER_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Resonant Crystal - player</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; background: #0d1117; color: #e6edf3; margin: 0; padding: 24px; }
  main { max-width: 640px; margin: 0 auto; }
  h1 { font-size: 18px; font-weight: 600; letter-spacing: .02em; color: #9cc3ff; margin: 0 0 16px; }
  .now { font-size: 22px; font-weight: 600; margin: 4px 0; }
  .muted { color: #8b949e; }
  audio { width: 100%; margin: 16px 0; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: 6px 16px; margin: 0; }
  dt { color: #8b949e; }
  dd { margin: 0; }
  table { width: 100%; border-collapse: collapse; margin-top: 16px; }
  th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #21262d; }
  th { color: #8b949e; font-weight: 500; }
  .stale { color: #f0883e; }
  .mark { font-size: 11px; border: 1px solid #f0883e; border-radius: 3px; padding: 0 4px; margin-left: 6px; }
  .fresh { color: #7ee787; }
  .dj { margin-top: 16px; font-style: italic; color: #c9d1d9; }
</style>
</head>
<body>
<main>
  <h1>Resonant Crystal</h1>
  <div class="muted">Now playing</div>
  <div class="now" id="now">...</div>
  <audio id="audio" src="/stream" controls autoplay preload="none"></audio>
  <dl>
    <dt>Block</dt><dd id="block">...</dd>
    <dt>Up next</dt><dd id="next">...</dd>
    <dt>Listeners</dt><dd id="listeners">...</dd>
  </dl>
  <table>
    <thead><tr><th>swarm</th><th>value</th><th>age</th></tr></thead>
    <tbody id="swarm"></tbody>
  </table>
  <div class="dj" id="dj"></div>
  <div class="muted" id="error"></div>
</main>
<script>
const $ = (id) => document.getElementById(id)
const title = (t) => (t ? t.artist + ' - ' + t.title : 'nothing')
function row(name, live) {
  const tr = document.createElement('tr')
  tr.dataset.name = name
  tr.className = live.stale ? 'stale' : 'fresh'
  const value = live.value === null ? 'none' : live.value.toFixed(3)
  const age = live.age_s === null ? 'never' : live.age_s.toFixed(1) + ' s'
  for (const [text, cls] of [[name, ''], [value, 'value'], [age, 'age']]) {
    const td = document.createElement('td')
    td.textContent = text
    if (cls) td.className = cls
    tr.appendChild(td)
  }
  if (live.stale) {
    const mark = document.createElement('span')
    mark.className = 'mark'
    mark.textContent = 'STALE'
    tr.lastChild.appendChild(mark)
  }
  return tr
}
async function refresh() {
  try {
    const s = await (await fetch('/api/state')).json()
    $('now').textContent = title(s.station.on_air && s.station.on_air.track)
    $('block').textContent = s.station.block + (s.station.programme ? ' (' + s.station.programme.title + ')' : '')
    $('next').textContent = title(s.station.up_next)
    $('listeners').textContent = s.station.listeners + (s.station.icecast && s.station.icecast.listeners !== null ? ' here, ' + s.station.icecast.listeners + ' on Icecast' : '')
    const w = s.swarm
    $('swarm').replaceChildren(
      row('queen phi', w.queen.phi), row('queen order', w.queen.order),
      row('consciousness phi', w.consciousness.phi), row('consciousness xi', w.consciousness.xi), row('consciousness order', w.consciousness.order),
    )
    $('dj').textContent = s.dj.last ? 'DJ: "' + s.dj.last.text + '"' : ''
    $('error').textContent = w.bus ? '' : 'no bus: the swarm is not heard here'
  } catch (e) {
    $('error').textContent = 'the station does not answer: ' + e.message
  }
}
refresh()
setInterval(refresh, 1000)
</script>
</body>
</html>
`
