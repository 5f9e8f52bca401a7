import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { type OptionValues, optionMap, saveOutcome } from './options.ts';

interface OptionsContextValue {
  options: OptionValues;
  loaded: boolean;
  reload(): Promise<void>;
  /** One PUT /api/option/ per change, then the messages of spec doc 2 §8 and a reload. Answers success. */
  save(changes: Array<{ key: string; value: string }>): Promise<boolean>;
}

const OptionsContext = createContext<OptionsContextValue | undefined>(undefined);

/** The current options (GET /api/option/), shared by every tab of the settings page. */
export function OptionsProvider({ children }: { children: ReactNode }) {
  const notify = useNotify();
  const translate = useTranslate();
  const { refresh } = useStatus();
  const [options, setOptions] = useState<OptionValues>({});
  const [loaded, setLoaded] = useState(false);

  const reload = useCallback(async () => {
    try {
      setOptions(optionMap(await api.get<Array<{ key: string; value: string }>>('/api/option/')));
      setLoaded(true);
    } catch (error) {
      notify(errorMessage(error) || 'settings.messages.refresh_failed', { type: 'error' });
    }
  }, [notify]);

  useEffect(() => {
    void reload();
  }, [reload]);

  const save = useCallback(
    async (changes: Array<{ key: string; value: string }>) => {
      const results = await Promise.all(
        changes.map(async ({ key, value }) => {
          try {
            await api.put('/api/option/', { key, value });
            return { ok: true, key };
          } catch (error) {
            return { ok: false, key, message: errorMessage(error) };
          }
        }),
      );
      const outcome = saveOutcome(results);
      const failure = results.find((result) => !result.ok) as { message?: string } | undefined;
      if (outcome === 'saved') notify('settings.messages.saved', { type: 'success' });
      else if (outcome === 'partial') {
        const reason = failure?.message ?? '';
        notify(`${translate('settings.messages.partial_failed')} (${translate(reason, { _: reason })})`, {
          type: 'error',
        });
      } else {
        // One key: "保存失败" with the server's reason; several: "保存失败，请重试" (spec doc 2 §8).
        const summary = translate(
          results.length === 1 ? 'settings.messages.save_failed' : 'settings.messages.save_failed_retry',
        );
        const reason = failure?.message;
        notify(reason ? `${summary} (${translate(reason, { _: reason })})` : summary, { type: 'error' });
      }
      try {
        setOptions(optionMap(await api.get<Array<{ key: string; value: string }>>('/api/option/')));
      } catch {
        notify('settings.messages.refresh_failed', { type: 'error' });
      }
      void refresh().catch(() => {});
      return outcome === 'saved';
    },
    [notify, translate, refresh],
  );

  const value = useMemo(() => ({ options, loaded, reload, save }), [options, loaded, reload, save]);
  return <OptionsContext.Provider value={value}>{children}</OptionsContext.Provider>;
}

export function useOptions(): OptionsContextValue {
  const value = useContext(OptionsContext);
  if (!value) throw new Error('useOptions outside <OptionsProvider>');
  return value;
}
