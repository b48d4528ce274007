// The station's routes: /stream (the MP3 stream, with ICY titles for clients that send
// `Icy-MetaData: 1`), /api/station, /api/state (with the swarm's fields), /api/swarm, /api/dreams, /player.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DreamsReplySchema, StateSchema, StationStatusSchema, SwarmReplySchema } from '../../engine/contracts/station.js'
import { BITRATE_KBPS } from './audio.js'
import type { MarketOdds } from './dj.js'
import { PLAYER_HTML } from './player.js'
import type { Station } from './station.js'
import { ICY_METAINT } from './stream.js'

export const stationRoutes: FastifyPluginAsync<{ station: Station }> = async (base, { station }) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.get('/api/state', { schema: { tags: ['station'], summary: "The station's state with the swarm's fields (swarm.queen.phi, swarm.consciousness.phi, xi, order; each with its age and a stale flag) and the voice DJ", response: { 200: StateSchema } } }, async () => station.state())
  app.get('/api/swarm', { schema: { tags: ['station'], summary: 'The swarm as the station hears it on the bus: every agent on QUEEN.phase.* and the last SVC.consciousness, with ages', response: { 200: SwarmReplySchema } } }, async () => station.swarm.swarm())
  app.get('/api/dreams', { schema: { tags: ['station'], summary: "The medium's dream state and the last dream reports (SVC.dreams), newest first", response: { 200: DreamsReplySchema } } }, async () => station.swarm.dreamsReply())
  app.get('/player', { schema: { tags: ['station'], summary: 'The player: now playing, block, up next, listeners, phi / xi / order with their age, and /stream' } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(PLAYER_HTML))
  // the DJ reads the top market's odds through the market routes, when the server has them
  station.dj.topMarket = async (): Promise<MarketOdds | null> => {
    const res = await base.inject({ method: 'GET', url: '/api/markets?sort=volume&status=open' })
    if (res.statusCode !== 200) return null
    const [top] = res.json() as { question: string; outcomes: string[]; prices: number[] }[]
    if (!top) return null
    const best = top.prices.indexOf(Math.max(...top.prices))
    return { question: top.question, outcome: top.outcomes[best], price: top.prices[best] }
  }
  app.get('/api/station', { schema: { tags: ['station'], summary: 'What is on air, what is next, and how many listen to /stream', response: { 200: StationStatusSchema } } }, async () => station.status())

  app.get(
    '/stream',
    {
      // a HEAD would open a listener that never ends
      exposeHeadRoute: false,
      schema: { tags: ['station'], summary: `The station as one continuous MP3 stream (${BITRATE_KBPS} kbps, 44.1 kHz stereo); send Icy-MetaData: 1 for titles every ${ICY_METAINT} bytes` },
    },
    async (req, reply) => {
      const icy = req.headers['icy-metadata'] === '1'
      reply.header('content-type', 'audio/mpeg').header('cache-control', 'no-cache, no-store').header('icy-name', 'Resonant Crystal').header('icy-br', String(BITRATE_KBPS))
      if (icy) reply.header('icy-metaint', String(ICY_METAINT))
      const out = station.broadcast.listen(icy)
      req.raw.on('close', () => out.destroy())
      return reply.send(out)
    },
  )
}
