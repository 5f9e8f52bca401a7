import { CHANNEL_ERRORS } from '../../domain/channels/errors.ts';
import type { ProtocolModelLister } from '../../domain/channels/index.ts';
import type { Protocol } from '../../domain/channels/registry.ts';
import { AppError } from '../../errors.ts';
import type { Transport } from '../transport.ts';
import { PROVIDERS } from './index.ts';
import type { Provider } from './types.ts';

/**
 * The channel service's way to list models through a protocol (types with listing `protocol`):
 * the provider's `listModels` over the relay's pooled connections, names deduplicated and sorted.
 */
export function protocolModelLister(transport: Transport): ProtocolModelLister {
  return async ({ protocol, baseUrl, other, key, timeoutMs }) => {
    const provider: Provider | undefined = PROVIDERS[protocol as Protocol];
    if (!provider?.listModels) throw new AppError(CHANNEL_ERRORS.CHANNEL_FETCH_UNSUPPORTED, { type: protocol });
    const models = await provider.listModels({ channel: { baseUrl, other }, key, transport, timeoutMs });
    return [...new Set(models)].sort();
  };
}
