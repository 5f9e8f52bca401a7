/**
 * Masks secrets in text that may reach a user (upstream error messages, task failure reasons, logs).
 *
 * The rule: every run of at least FRAGMENT_LENGTH characters that also occurs in a secret — raw, URL-encoded
 * or base64 (standard and URL-safe, at each of the three byte alignments, so a secret inside a longer
 * encoded value such as `Basic base64(user:secret)` is found too) — is replaced by MASK. Upstreams often quote
 * a key truncated (`sk-abcdefgh...wxyz`): any 8 consecutive characters of it are caught; shorter pieces
 * (OpenAI's `...wxyz`) carry too little of the key to matter and are left, as are secrets shorter than 8
 * characters (masking those would garble ordinary words and numbers).
 *
 * Work is linear in the text: one set lookup per position over a set of the secrets' 8-character windows.
 */
export const FRAGMENT_LENGTH = 8;
export const MASK = '***';

export class SecretMask {
  /** Every FRAGMENT_LENGTH-character window of every form of every secret. */
  readonly #windows: ReadonlySet<string>;

  constructor(secrets: Iterable<string>) {
    const windows = new Set<string>();
    for (const secret of secrets) {
      if (secret.length < FRAGMENT_LENGTH) continue;
      for (const form of encodedForms(secret)) {
        for (let i = 0; i + FRAGMENT_LENGTH <= form.length; i++) windows.add(form.slice(i, i + FRAGMENT_LENGTH));
      }
    }
    this.#windows = windows;
  }

  get empty(): boolean {
    return this.#windows.size === 0;
  }

  /** The text with every secret fragment replaced by MASK (adjacent or overlapping fragments become one). */
  mask(text: string): string {
    if (this.#windows.size === 0 || text.length < FRAGMENT_LENGTH) return text;
    let out = '';
    let copiedTo = 0;
    let maskedTo = -1;
    let maskStart = -1;
    for (let i = 0; i + FRAGMENT_LENGTH <= text.length; i++) {
      if (!this.#windows.has(text.slice(i, i + FRAGMENT_LENGTH))) continue;
      if (i > maskedTo) {
        if (maskStart >= 0) {
          out += text.slice(copiedTo, maskStart) + MASK;
          copiedTo = maskedTo;
        }
        maskStart = i;
      }
      maskedTo = i + FRAGMENT_LENGTH;
    }
    if (maskStart < 0) return text;
    return out + text.slice(copiedTo, maskStart) + MASK + text.slice(maskedTo);
  }

  /** Masks every string inside a JSON-like value (keys included), leaving its structure as it was. */
  maskDeep<T>(value: T): T {
    if (this.#windows.size === 0) return value;
    return this.#deep(value, 0) as T;
  }

  #deep(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.mask(value);
    // Values here come from parsed JSON; a nesting this deep is cut rather than walked.
    if (typeof value !== 'object' || value === null || depth > 64) return value;
    if (Array.isArray(value)) return value.map((item) => this.#deep(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[this.mask(key)] = this.#deep(item, depth + 1);
    return out;
  }
}

/** The secret as it may appear in text: raw, URL-encoded, and base64 at each byte alignment. */
function encodedForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), encodeURI(secret)]);
  const bytes = Buffer.from(secret, 'utf8');
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const encoded = padded.toString('base64').replace(/=+$/, '');
    // Characters that also depend on the bytes before or after the secret differ by context: drop them.
    const head = offset === 0 ? 0 : offset + 1;
    const tail = padded.length % 3 === 0 ? encoded.length : encoded.length - 1;
    const stable = encoded.slice(head, tail);
    forms.add(stable);
    forms.add(stable.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...forms];
}
