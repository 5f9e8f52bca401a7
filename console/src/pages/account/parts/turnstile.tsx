import { Box } from '@mui/material';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useStatus } from '../../../status/StatusContext.tsx';
import { loadScript } from './scripts.ts';

/** Cloudflare's Turnstile script, rendered explicitly into our own element. */
export const TURNSTILE_SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';

interface TurnstileApi {
  render(element: HTMLElement, options: Record<string, unknown>): string | undefined;
  reset(widgetId?: string): void;
  remove(widgetId?: string): void;
}

declare global {
  interface Window {
    turnstile?: TurnstileApi;
  }
}

/**
 * The human check of spec doc 1 §2 and §5 (status `turnstile_check` with `turnstile_site_key`): `enabled`
 * says whether it is on, `token` is the current answer ('' until the widget has one), `widget` goes in the
 * form, and `reset()` asks for a new token after one was spent.
 */
export function useTurnstile() {
  const { status } = useStatus();
  const enabled = Boolean(status.turnstile_check && status.turnstile_site_key);
  const [token, setToken] = useState('');
  const [generation, setGeneration] = useState(0);
  const reset = useCallback(() => {
    setToken('');
    setGeneration((n) => n + 1);
  }, []);
  const widget = enabled ? (
    <TurnstileWidget siteKey={status.turnstile_site_key} generation={generation} onToken={setToken} />
  ) : null;
  return { enabled, token, widget, reset };
}

function TurnstileWidget(props: { siteKey: string; generation: number; onToken(token: string): void }) {
  const { siteKey, generation, onToken } = props;
  const element = useRef<HTMLDivElement>(null);
  const widgetId = useRef<string | undefined>(undefined);
  const onTokenRef = useRef(onToken);
  onTokenRef.current = onToken;

  useEffect(() => {
    let cancelled = false;
    loadScript(TURNSTILE_SCRIPT)
      .then(() => {
        if (cancelled || !element.current || !window.turnstile) return;
        widgetId.current = window.turnstile.render(element.current, {
          sitekey: siteKey,
          callback: (token: string) => onTokenRef.current(token),
          'expired-callback': () => onTokenRef.current(''),
          'error-callback': () => onTokenRef.current(''),
        });
      })
      .catch(() => {
        // No widget: submitting says to retry in a few seconds (spec doc 1 §5).
      });
    return () => {
      cancelled = true;
      if (widgetId.current !== undefined) window.turnstile?.remove(widgetId.current);
      widgetId.current = undefined;
    };
  }, [siteKey]);

  useEffect(() => {
    if (generation > 0 && widgetId.current !== undefined) window.turnstile?.reset(widgetId.current);
  }, [generation]);

  return <Box ref={element} data-testid="turnstile" sx={{ my: 1, minHeight: 65 }} />;
}
