import { useEffect, useState } from 'react';
import { api } from '../../providers/http.ts';

export interface Localized {
  zh: string;
  en: string;
}

/** A row of the gateway's channel-type registry, as `GET /api/channel/types` answers it. */
export interface ChannelTypeInfo {
  id: number;
  name: string;
  offered: boolean;
  /** Why the type is not offered; empty when it is. */
  reason: Localized;
  protocol: string | null;
  base_url: string;
  key: { hint: string; separator: string | null; parts: string[] | null };
  /** What `other` means for the type, in the console's two languages. */
  other: { label: Localized; hint: Localized; default: string | null; choices: string[] | null } | null;
  endpoints: string[];
  testable: boolean;
  balance: boolean;
  model_listing: boolean;
}

/** The registry never changes while the console runs: ask once, share the answer. */
let request: Promise<ChannelTypeInfo[]> | undefined;

function loadChannelTypes(): Promise<ChannelTypeInfo[]> {
  request ??= api.get<ChannelTypeInfo[]>('/api/channel/types').then(
    (list) => list ?? [],
    (error: unknown) => {
      request = undefined; // a failed load is retried by the next screen that asks
      throw error;
    },
  );
  return request;
}

/** The channel types, empty until loaded. */
export function useChannelTypes(): ChannelTypeInfo[] {
  const [types, setTypes] = useState<ChannelTypeInfo[]>([]);
  useEffect(() => {
    let live = true;
    loadChannelTypes()
      .then((list) => live && setTypes(list))
      .catch(() => {});
    return () => {
      live = false;
    };
  }, []);
  return types;
}

/** A type's display name; a type the registry does not know shows as `#id`. */
export function channelTypeName(types: readonly ChannelTypeInfo[], id: number): string {
  return types.find((type) => type.id === id)?.name ?? `#${id}`;
}
