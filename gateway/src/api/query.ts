import type { FastifyRequest } from 'fastify';
import { pagingQuery } from './paging.ts';

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

/** new-api's paging parameters, described for the OpenAPI document. */
export const describedPaging = {
  p: { ...pagingQuery.p, description: 'Page number, 1-based (0 reads as 1)' },
  page_size: { ...pagingQuery.page_size, description: 'Items per page, default 10, at most 100' },
  ps: { ...pagingQuery.ps, description: 'Alias of page_size' },
  size: { ...pagingQuery.size, description: 'Alias of page_size' },
} as const;
