import type { FastifyRequest } from 'fastify';

/**
 * new-api's console and scripts send every filter, empty ones included (`channel=&start_timestamp=`),
 * and new-api reads an empty value as "no filter". Dropping them before validation keeps that, while a
 * value that is there must still be valid.
 */
export async function dropEmptyQuery(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown> | undefined;
  if (!query) return;
  for (const [key, value] of Object.entries(query)) if (value === '') delete query[key];
}
