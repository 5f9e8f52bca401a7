/**
 * Time to count the prompt tokens of unbroken text, the input that made the count quadratic (issue 18):
 * 200 KB and 1 MB of one repeated letter, of base64 and of unpunctuated Chinese, and of ordinary prose
 * for comparison, with o200k (gpt-4o) and cl100k (gpt-4). "after" is countTextTokens (runs cut at RUN_LIMIT, exact up to EXACT_LIMIT, then by
 * bytes); "before" is the o200k encoder's plain count, which countTextTokens called until then. "before" takes
 * seconds to minutes per sample, so it runs only when asked, and on 1 MB only when asked for that too.
 * Each figure is the slowest of three runs, after a warm-up (the vocabulary loads once).
 * "on the loop" is what the relay spends on the event loop for the same prompt as a chat request: the walk of
 * the body and the hand-over to the worker pool (prompt-count-pool.ts), and the loop's longest stall
 * (monitorEventLoopDelay) while a worker thread counts it.
 *
 *   node bench/token-count.ts [--before] [--before-1mb]
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { promptTexts } from '../gateway/src/domain/billing/estimate.ts';
import { promptCount } from '../gateway/src/domain/billing/prompt-count-pool.ts';
import { countTextTokens } from '../gateway/src/domain/billing/tokenizer.ts';

const MODELS = ['gpt-4o', 'gpt-4'];
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const before = process.argv.includes('--before');
const beforeLarge = process.argv.includes('--before-1mb');

function samples(chars: number): Record<string, string> {
  const bytes = Buffer.alloc(chars);
  for (let i = 0; i < chars; i++) bytes[i] = (i * 2654435761) >>> 24;
  const prose = 'The gateway counts tokens, bills them, and answers: "done" after 42 ms. ';
  return {
    letter: 'a'.repeat(chars),
    base64: bytes.toString('base64').slice(0, chars),
    chinese: '网关在本地计算提示词的令牌数量并据此计费'.repeat(chars / 20 + 1).slice(0, chars),
    prose: prose.repeat(chars / prose.length + 1).slice(0, chars),
  };
}

/** The slowest of three runs of `count`, in ms, and its result. */
function slowest(count: () => number): { ms: number; tokens: number } {
  let ms = 0;
  let tokens = 0;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    tokens = count();
    ms = Math.max(ms, performance.now() - start);
  }
  return { ms, tokens };
}

for (const model of MODELS) countTextTokens(model, 'warm up');
countTokens('warm up', PLAIN_TEXT);
for (const [label, chars] of [
  ['200 KB', 200_000],
  ['1 MB', 1_000_000],
] as const) {
  for (const [kind, text] of Object.entries(samples(chars))) {
    const columns = MODELS.map((model) => {
      const after = slowest(() => countTextTokens(model, text));
      return `${model} after ${after.ms.toFixed(1).padStart(5)} ms ${String(after.tokens).padStart(7)} tokens`;
    });
    if (before && (chars < 1_000_000 || beforeLarge || kind === 'prose')) {
      const start = performance.now();
      const exact = countTokens(text, PLAIN_TEXT);
      columns.push(`gpt-4o before ${(performance.now() - start).toFixed(1).padStart(9)} ms ${exact} tokens`);
    }
    console.log(`${label.padEnd(7)}${kind.padEnd(9)}${columns.join(' | ')}`);
  }
}

/** The relay's share of the event loop for a chat request with `text` as its prompt, in ms. */
async function onTheLoop(text: string): Promise<{ handOver: number; longestStall: number }> {
  // Parsed, as the relay has it (flat strings, not the samples' slices and repeats).
  const body = JSON.parse(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: text }] }));
  const stalls = monitorEventLoopDelay({ resolution: 1 });
  stalls.enable();
  const start = performance.now();
  const counted = promptCount('gpt-4o', promptTexts('openai-chat', 'gpt-4o', body));
  const handOver = performance.now() - start;
  await counted;
  stalls.disable();
  return { handOver, longestStall: stalls.max / 1e6 };
}

await onTheLoop('a'.repeat(100_000));
for (const [kind, text] of Object.entries(samples(1_000_000))) {
  let worst = { handOver: 0, longestStall: 0 };
  for (let i = 0; i < 3; i++) {
    const run = await onTheLoop(text);
    worst = {
      handOver: Math.max(worst.handOver, run.handOver),
      longestStall: Math.max(worst.longestStall, run.longestStall),
    };
  }
  console.log(
    `1 MB   ${kind.padEnd(9)}on the loop: hand-over ${worst.handOver.toFixed(1).padStart(4)} ms, ` +
      `longest stall while a worker counts ${worst.longestStall.toFixed(1).padStart(4)} ms`,
  );
}
