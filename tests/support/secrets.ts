import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import type { Answer, DashboardClient } from './client.ts';

/**
 * Watches for secrets leaking into answers: `secret()` makes a key and remembers it, `recording()`
 * makes a client keep every answer it gets (body and headers), `leaks()` lists the answers that hold
 * a remembered key.
 */
export function secretWatch() {
  const secrets: string[] = [];
  const answers: string[] = [];
  return {
    /** Every key remembered so far. */
    secrets: secrets as readonly string[],
    /** Every answer recorded so far, as text. */
    answers: answers as readonly string[],
    secret(prefix = 'sk-good'): string {
      const key = `${prefix}-${randomBytes(8).toString('hex')}`;
      secrets.push(key);
      return key;
    },
    /** Remembers a key made elsewhere (e.g. one the gateway generated). */
    remember(key: string): void {
      secrets.push(key);
    },
    /** Forgets the last answer: one that rightly holds a key (a token answered to its creator). */
    forgetLastAnswer(): void {
      answers.pop();
    },
    recording(client: DashboardClient): DashboardClient {
      const call = client.call.bind(client);
      client.call = async (...args: Parameters<DashboardClient['call']>): Promise<Answer> => {
        const answer = await call(...args);
        answers.push(JSON.stringify(answer.body ?? null) + JSON.stringify([...answer.headers]));
        return answer;
      };
      return client;
    },
    leaks(): string[] {
      return answers.filter((answer) => secrets.some((key) => answer.includes(key)));
    },
  };
}

/** A loopback port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
