// The swarm's page-facing side: where a browser tab finds the bus (its websocket address) and the
// persistence floor for announcements, so that a tab explores as a process does.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import * as api from '../../engine/contracts/api.js'

export interface SwarmRoutesOptions {
  /** SVC_NATS_WS_URL, when the server has one. */
  wsUrl?: string
  announceFloor: number
}

export const swarmRoutes: FastifyPluginAsyncTypebox<SwarmRoutesOptions> = async (app, { wsUrl, announceFloor }) => {
  app.get(
    '/swarm/config',
    {
      schema: {
        tags: ['swarm'],
        summary: "The bus's websocket address for browser tabs, and the announce floor",
        response: { 200: api.SwarmConfigReply },
      },
    },
    async () => ({
      ws_url: wsUrl ?? null,
      announce_floor: announceFloor,
    }),
  )
}
