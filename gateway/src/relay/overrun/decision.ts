/** Where a metered stream stands against what its request holds. */
export interface Standing {
  /** Quota the request holds: its reservation and every top-up granted. */
  reserved: number;
  /** What the output delivered so far costs, with the prompt (the bill if the stream ended now). */
  spent: number;
  /** Quota of one completion token from here on (at most: an expression's price may climb ahead). */
  quotaPerToken: number;
  /** Quota one top-up adds (a completion budget's worth). */
  stepQuota: number;
  /** A top-up was refused: the stream runs on what it holds, checked at every upstream chunk. */
  refused: boolean;
}

/**
 * What to do after a check: go on and check again once this many more characters of event data
 * have come (0: at the next chunk); hold `amount` more; or end the stream.
 */
export type Decision =
  | { action: 'go'; checkAfterChars: number }
  | { action: 'top-up'; amount: number }
  | { action: 'cut' };

/**
 * The top-up decision. A top-up is asked for once the headroom (held minus spent) falls below half a
 * step, so a stream usually never waits at its limit. Once one was refused, the stream goes on until
 * what it holds is spent, asks once more then (another request may have given quota back), and is cut
 * if refused again: so it overruns what it held by at most the upstream chunk that crossed the line.
 *
 * Between checks the stream is not parsed: a character of event data (JSON and all) carries at most
 * about one token of text, so the headroom in tokens is how many characters may pass unchecked.
 */
export function decide(standing: Standing): Decision {
  const headroom = standing.reserved - standing.spent;
  if (standing.refused)
    return headroom > 0 ? { action: 'go', checkAfterChars: 0 } : { action: 'top-up', amount: standing.stepQuota };
  if (headroom < standing.stepQuota / 2) return { action: 'top-up', amount: standing.stepQuota };
  return { action: 'go', checkAfterChars: Math.max(1, Math.floor(headroom / standing.quotaPerToken)) };
}

/** After a top-up was answered: granted, the stream goes on as before; refused past its hold, it is cut. */
export function afterTopUp(standing: Standing, granted: boolean): Decision {
  if (granted) return decide({ ...standing, reserved: standing.reserved + standing.stepQuota, refused: false });
  if (standing.refused || standing.reserved - standing.spent <= 0) return { action: 'cut' };
  return decide({ ...standing, refused: true });
}
