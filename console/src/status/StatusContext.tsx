import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import { loadStatus, type SiteStatus, type StatusLoad } from './status.ts';

interface StatusContextValue {
  status: SiteStatus;
  /** Set when the last load failed and a cached or default status is shown: the message key to show. */
  failure: StatusLoad['failure'];
  /** Reads /api/status again (after settings change). */
  refresh(): Promise<void>;
}

const StatusContext = createContext<StatusContextValue | undefined>(undefined);

export function StatusProvider(props: { initial: StatusLoad; children: ReactNode }) {
  const [state, setState] = useState<StatusLoad>(props.initial);
  const refresh = useCallback(async () => {
    const loaded = await loadStatus();
    setState((previous) => (loaded.failure ? { ...previous, failure: loaded.failure } : loaded));
  }, []);
  const value = useMemo(() => ({ status: state.status, failure: state.failure, refresh }), [state, refresh]);
  return <StatusContext.Provider value={value}>{props.children}</StatusContext.Provider>;
}

/** The status object read at start (spec doc 1 §3), with `refresh()`. */
export function useStatus(): StatusContextValue {
  const value = useContext(StatusContext);
  if (!value) throw new Error('useStatus outside <StatusProvider>');
  return value;
}
