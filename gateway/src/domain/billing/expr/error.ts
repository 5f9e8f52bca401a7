/**
 * A billing expression that cannot be compiled or evaluated. `position` is the 0-based offset in the
 * source of the offending character (the option editor and `/api/option/` report it 1-based).
 */
export class ExprError extends Error {
  override name = 'ExprError';
  readonly position: number;
  readonly reason: { zh: string; en: string };

  constructor(position: number, en: string, zh: string) {
    super(`${en} (at position ${position + 1})`);
    this.position = position;
    this.reason = { zh, en };
  }
}
