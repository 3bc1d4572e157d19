import type { FastifyInstance, FastifySchema } from 'fastify';
import { type OAuthResourceServer, PROTECTED_RESOURCE_PATH } from './oauth.js';

const METADATA_SCHEMA = {
  summary:
    'OAuth 2.0 Protected Resource Metadata (RFC 9728): the resource, its authorization servers, its scopes',
  response: { 200: { description: 'The metadata', type: 'object' } },
} as FastifySchema;

/** The routes of the metadata, public: at the well-known name, and with the resource's path after it. */
export const METADATA_ROUTES = [PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}/*`];

export function mountResourceMetadata(
  app: FastifyInstance,
  oauth: Pick<OAuthResourceServer, 'metadata'>,
): void {
  for (const url of METADATA_ROUTES) app.get(url, { schema: METADATA_SCHEMA }, async () => oauth.metadata());
}
