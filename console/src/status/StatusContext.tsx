import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import { loadStatus, type SiteStatus } from './status.ts';

interface StatusContextValue {
  status: SiteStatus;
  /** False when the last load failed and a cached or default status is shown. */
  fresh: boolean;
  /** Reads /api/status again (after settings change). */
  refresh(): Promise<void>;
}

const StatusContext = createContext<StatusContextValue | undefined>(undefined);

export function StatusProvider(props: { initial: SiteStatus; fresh: boolean; children: ReactNode }) {
  const [state, setState] = useState({ status: props.initial, fresh: props.fresh });
  const refresh = useCallback(async () => {
    const loaded = await loadStatus();
    setState((previous) => (loaded.fresh ? { status: loaded.status, fresh: true } : { ...previous, fresh: false }));
  }, []);
  const value = useMemo(() => ({ ...state, refresh }), [state, refresh]);
  return <StatusContext.Provider value={value}>{props.children}</StatusContext.Provider>;
}

/** The status object read at start (spec doc 1 §3), with `refresh()`. */
export function useStatus(): StatusContextValue {
  const value = useContext(StatusContext);
  if (!value) throw new Error('useStatus outside <StatusProvider>');
  return value;
}
