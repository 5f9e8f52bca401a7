import { lookup as dnsLookup, type LookupAddress as NodeLookupAddress } from 'node:dns';
import { Agent, type Dispatcher, request } from 'undici';
import { type CheckedTarget, checkOutboundUrl, type FetchSettings, type Lookup, type LookupAddress } from './policy.ts';

export interface OutboundRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** Redirects to follow, each hop checked like the first; 0 (the default) hands a 3xx back as the answer. */
  maxRedirects?: number;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** Where the answer came from, after any redirects. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A resolver that does not answer must not hold a request (or a settings save) for its own retries. */
const LOOKUP_TIMEOUT_MS = 5000;

export const systemLookup: Lookup = (hostname) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(Object.assign(new Error(`DNS lookup of ${hostname} timed out`), { code: 'ETIMEOUT' })),
      LOOKUP_TIMEOUT_MS,
    );
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses: NodeLookupAddress[]) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(addresses);
    });
  });

/**
 * Server-side HTTP to URLs that users or upstream answers supplied (callbacks, webhooks, result
 * images), checked against fetch_setting.* first. The connection goes to an address that was
 * checked, never to a second DNS answer (a rebinding name cannot swap in 127.0.0.1 after the check),
 * and a redirect is either handed back or checked again like a new URL.
 */
export class OutboundGuard {
  readonly #settings: () => FetchSettings;
  readonly #lookup: Lookup;

  constructor(deps: { settings: () => FetchSettings; lookup?: Lookup }) {
    this.#settings = deps.settings;
    this.#lookup = deps.lookup ?? systemLookup;
  }

  /** Throws OutboundRefused when the URL may not be fetched now. */
  check(url: string): Promise<CheckedTarget> {
    return checkOutboundUrl(url, this.#settings(), this.#lookup);
  }

  async send(outbound: OutboundRequest): Promise<OutboundResponse> {
    let url = outbound.url;
    let method = outbound.method ?? 'GET';
    let headers = { ...outbound.headers };
    let body = outbound.body;
    for (let hop = 0; ; hop++) {
      const target = await this.check(url);
      // One agent per request: its connections exist only for this checked target.
      const agent = new Agent({ connect: target.addresses ? { lookup: pinned(target.addresses) } : {} });
      let response: Dispatcher.ResponseData;
      try {
        response = await request(target.url, { dispatcher: agent, method, headers, body, signal: outbound.signal });
      } finally {
        // Graceful: the connection closes once this response's body has been read.
        void agent.close();
      }
      const location = response.headers.location;
      if (!REDIRECTS.has(response.statusCode) || typeof location !== 'string' || hop >= (outbound.maxRedirects ?? 0)) {
        return { status: response.statusCode, headers: response.headers, body: response.body, url: target.url.href };
      }
      await response.body.dump();
      const next = new URL(location, target.url);
      if (next.origin !== target.url.origin) headers = withoutCredentials(headers);
      if (response.statusCode === 303 || (method === 'POST' && response.statusCode <= 302)) {
        method = 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      url = next.href;
    }
  }
}

/** A connect-time lookup that answers only the addresses the check passed. */
function pinned(addresses: LookupAddress[]) {
  return (
    _hostname: string,
    options: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !['authorization', 'cookie'].includes(name.toLowerCase())),
  );
}
