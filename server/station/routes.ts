// The station's routes: /stream (the MP3 stream, with ICY titles for clients that send
// `Icy-MetaData: 1`; HEAD answers its headers), /api/station, /api/state (with the swarm's fields),
// /api/swarm, /api/dreams, /player, and the operator's library, history, requests and skip.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { timingSafeEqual } from 'node:crypto'
import * as api from '../../engine/contracts/api.js'
import {
  DreamsReplySchema,
  HistoryQuerySchema,
  HistoryReplySchema,
  LibraryReplySchema,
  RequestBodySchema,
  RequestReplySchema,
  SkipReplySchema,
  StateSchema,
  StationStatusSchema,
  SwarmReplySchema,
} from '../../engine/contracts/station.js'
import { problem } from '../errors.js'
import { BITRATE_KBPS } from './audio.js'
import type { MarketOdds } from './dj.js'
import { PLAYER_HTML } from './player.js'
import type { Station } from './station.js'
import { ICY_METAINT } from './stream.js'

/** With an API token set, the operator's routes need it (the server's own check leaves /api/ to each
 * plugin, as the markets carry their own tokens). */
function operator(token: string | undefined) {
  const expected = token === undefined ? undefined : Buffer.from(`Bearer ${token}`)
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (!expected) return
    const given = Buffer.from(req.headers.authorization ?? '')
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return problem(reply, 401, "the station's controls need Authorization: Bearer <SVC_CRYSTAL_API_TOKEN>", { code: 'unauthorized' })
  }
}

const problems = { 400: api.Problem, 401: api.Problem, 404: api.Problem, 409: api.Problem }

export const stationRoutes: FastifyPluginAsync<{ station: Station; token?: string }> = async (base, { station, token }) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = operator(token)
  const security = token ? [{ bearer: [] }] : []
  app.get(
    '/api/state',
    {
      schema: {
        tags: ['station'],
        summary:
          "The station's state with the swarm's fields (swarm.queen.phi, swarm.consciousness.phi, xi, order; each with its age and a stale flag) and the voice DJ",
        response: { 200: StateSchema },
      },
    },
    async () => station.state(),
  )
  app.get(
    '/api/swarm',
    {
      schema: {
        tags: ['station'],
        summary: 'The swarm as the station hears it on the bus: every agent on QUEEN.phase.* and the last SVC.consciousness, with ages',
        response: { 200: SwarmReplySchema },
      },
    },
    async () => station.swarm.swarm(),
  )
  app.get(
    '/api/dreams',
    {
      schema: {
        tags: ['station'],
        summary: "The medium's dream state and the last dream reports (SVC.dreams), newest first",
        response: { 200: DreamsReplySchema },
      },
    },
    async () => station.swarm.dreamsReply(),
  )
  app.get(
    '/player',
    {
      schema: {
        tags: ['station'],
        summary: 'The player: now playing, block, up next, listeners, phi / xi / order with their age, and /stream',
      },
    },
    async (_req, reply) => reply.type('text/html; charset=utf-8').send(PLAYER_HTML),
  )
  // the DJ reads the top market's odds through the market routes, when the server has them
  station.dj.topMarket = async (): Promise<MarketOdds | null> => {
    const res = await base.inject({ method: 'GET', url: '/api/markets?sort=volume&status=open' })
    if (res.statusCode !== 200) return null
    const [top] = res.json() as { question: string; outcomes: string[]; prices: number[] }[]
    if (!top) return null
    const best = top.prices.indexOf(Math.max(...top.prices))
    return { question: top.question, outcome: top.outcomes[best], price: top.prices[best] }
  }
  app.get(
    '/api/station',
    {
      schema: {
        tags: ['station'],
        summary: 'What is on air, what is next, the requests, and how many listen to /stream (and to Icecast)',
        response: { 200: StationStatusSchema },
      },
    },
    async () => station.status(),
  )
  app.get(
    '/api/station/library',
    {
      schema: {
        tags: ['station'],
        summary: 'The library as last scanned (rescanned when its folder changes): every track with its id, and the files skipped',
        response: { 200: LibraryReplySchema },
      },
    },
    async () => station.libraryReply(),
  )
  app.get(
    '/api/station/history',
    {
      schema: {
        tags: ['station'],
        summary: 'The tracks that went on air, newest first, with what picked each',
        querystring: HistoryQuerySchema,
        response: { 200: HistoryReplySchema },
      },
    },
    async (req) => station.historyReply(req.query.limit),
  )
  app.post(
    '/api/station/requests',
    {
      onRequest,
      schema: {
        tags: ['station'],
        summary: 'Request a library track: it plays next (after earlier requests, and after a crossfade already under way)',
        security,
        body: RequestBodySchema,
        response: { 200: RequestReplySchema, ...problems },
      },
    },
    async (req) => station.request(req.body.track_id),
  )
  app.post(
    '/api/station/skip',
    {
      onRequest,
      schema: { tags: ['station'], summary: 'Fade into the next track now', security, response: { 200: SkipReplySchema, ...problems } },
    },
    async () => station.skip(),
  )

  const streamHeaders = (reply: FastifyReply, icy: boolean) => {
    reply
      .header('content-type', 'audio/mpeg')
      .header('cache-control', 'no-cache, no-store')
      .header('icy-name', 'Resonant Crystal')
      .header('icy-br', String(BITRATE_KBPS))
    if (icy) reply.header('icy-metaint', String(ICY_METAINT))
  }
  // players and monitors ask HEAD first: the headers, without opening a listener
  app.head(
    '/stream',
    { schema: { tags: ['station'], summary: "The stream's headers (a player's or a monitor's check), no listener opened" } },
    async (req, reply) => {
      streamHeaders(reply, req.headers['icy-metadata'] === '1')
      return reply.send()
    },
  )
  app.get(
    '/stream',
    {
      // the HEAD route above answers without opening a listener that never ends
      exposeHeadRoute: false,
      schema: {
        tags: ['station'],
        summary: `The station as one continuous MP3 stream (${BITRATE_KBPS} kbps, 44.1 kHz stereo); send Icy-MetaData: 1 for titles every ${ICY_METAINT} bytes`,
      },
    },
    async (req, reply) => {
      const icy = req.headers['icy-metadata'] === '1'
      streamHeaders(reply, icy)
      const out = station.broadcast.listen(icy)
      req.raw.on('close', () => out.destroy())
      return reply.send(out)
    },
  )
}
