import { createRequire } from 'node:module';
import { countBounded } from './bounded-count.ts';

type Encoding = typeof import('gpt-tokenizer/encoding/o200k_base');
export type EncodingName = 'o200k_base' | 'cl100k_base';

const require = createRequire(import.meta.url);
const encoders = new Map<EncodingName, Encoding>();

// Text such as "<|endoftext|>" in a prompt is ordinary text to count, not a special token to refuse.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The encoding of a model: o200k for the GPT-4o generation and later (4o, 4.1, 4.5, 5, o-series,
 * image, realtime, audio, oss), cl100k for GPT-3.5/GPT-4, embeddings and every other vendor's
 * model, where it stands in as an estimate.
 */
export function encodingFor(model: string): EncodingName {
  const m = model.toLowerCase();
  return O200K.test(m) ? 'o200k_base' : 'cl100k_base';
}
const O200K =
  /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-image|gpt-realtime|gpt-audio|gpt-oss|chatgpt-|o\d|codex-|computer-use|omni-moderation)/;

/**
 * Tokens of `text` as the model's tokenizer counts them: exactly for ordinary text, by the bounded
 * rule of bounded-count.ts for unbroken runs and beyond its size limit.
 */
export function countTextTokens(model: string, text: string): number {
  if (text.length === 0) return 0;
  const encoding = encoder(encodingFor(model));
  return countBounded(text, (piece) => encoding.countTokens(piece, PLAIN_TEXT));
}

// Loaded on first use, one encoding at a time, and synchronously (CommonJS build) so that counting stays a
// plain function call. Not at start: a vocabulary costs the process tens of MiB (o200k about 45–55 MiB RSS,
// most of it parsing its 2.4 MB module), which only a gateway that counts tokens should carry; the first
// request that counts with an encoding pays its load once (o200k 150–250 ms).
function encoder(name: EncodingName): Encoding {
  let loaded = encoders.get(name);
  if (loaded === undefined) {
    loaded = require(`gpt-tokenizer/encoding/${name}`) as Encoding;
    encoders.set(name, loaded);
  }
  return loaded;
}
