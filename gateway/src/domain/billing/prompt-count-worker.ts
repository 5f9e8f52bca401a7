/**
 * A worker thread of the prompt-count pool (prompt-count-pool.ts): counts the texts of one prompt per
 * message and answers with their tokens. Importing it on the main thread (the compile-cache warm-up
 * imports every module) does nothing.
 */
import { parentPort } from 'node:worker_threads';
import { countTextTokens } from './tokenizer.ts';

/** A job: the model whose tokenizer counts, and the texts, each counted alone. */
export interface CountJob {
  model: string;
  texts: string[];
}

/** The answer: the tokens of all texts, or why they could not be counted. */
export type CountAnswer = { tokens: number } | { error: string };

const port = parentPort;
port?.on('message', (job: CountJob) => {
  let answer: CountAnswer;
  try {
    let tokens = 0;
    for (const text of job.texts) tokens += countTextTokens(job.model, text);
    answer = { tokens };
  } catch (error) {
    answer = { error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(answer);
});
