// The swarm's page-facing side: where a browser tab finds the bus (its websocket address) and the
// persistence floor for announcements, so that a tab explores as a process does.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import * as api from '../../engine/contracts/api.js'
import { announceFloor } from '../../engine/swarm/link.node.js'

export const swarmRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const floor = announceFloor(process.env)
  app.get('/swarm/config', { schema: { tags: ['swarm'], summary: "The bus's websocket address for browser tabs, and the announce floor", response: { 200: api.SwarmConfigReply } } }, async () => ({
    ws_url: process.env.SVC_NATS_WS_URL || null,
    announce_floor: floor,
  }))
}
