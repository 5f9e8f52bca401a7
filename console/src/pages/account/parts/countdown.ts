import { useCallback, useEffect, useState } from 'react';

/** Resend locks (spec doc 1 §9, doc 2 §9): email codes and password-reset mails wait 30 seconds. */
export const RESEND_LOCK_SECONDS = 30;

/**
 * A countdown for a button that must wait before it can be used again: `remaining` is 0 when free;
 * `start()` locks it for `seconds`.
 */
export function useCountdown(seconds = RESEND_LOCK_SECONDS): { remaining: number; start(): void } {
  const [until, setUntil] = useState(0);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (until <= now) return;
    const timer = setTimeout(() => setNow(Date.now()), 250);
    return () => clearTimeout(timer);
  }, [until, now]);
  const start = useCallback(() => {
    const at = Date.now();
    setNow(at);
    setUntil(at + seconds * 1000);
  }, [seconds]);
  return { remaining: Math.max(0, Math.ceil((until - now) / 1000)), start };
}
