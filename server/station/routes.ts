// The station's routes: /stream (the MP3 stream, with ICY titles for clients that send
// `Icy-MetaData: 1`) and /api/station (what is on air, what is next, how many listen).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { StationStatusSchema } from '../../engine/contracts/station.js'
import { BITRATE_KBPS } from './audio.js'
import type { Station } from './station.js'
import { ICY_METAINT } from './stream.js'

export const stationRoutes: FastifyPluginAsync<{ station: Station }> = async (base, { station }) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
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
