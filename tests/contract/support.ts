import { expect } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import type { Answer } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

/**
 * Shared pieces of the contract suite: one gateway per file, clients that call /api the way new-api's
 * web front end does (New-Api-User and Cache-Control: no-store on every call), and shape checks for the
 * envelope and the fields the front end reads (tests/contract/CATALOGUE.md lists them per call).
 */

/** What `typeof` must say about a field, plus the shapes JavaScript's typeof cannot tell apart. */
export type FieldType =
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'object'
  | 'array'
  | 'null'
  /** A string the front end hands to JSON.parse (empty allowed: the front end skips ''). */
  | 'json-text'
  /** A string whose JSON.parse gives an object (not null, not an array). */
  | 'json-object-text';

export type Shape = Record<string, FieldType | FieldType[]>;

export interface ContractGateway {
  gateway: Gateway;
  url: string;
  root: FrontEnd;
  /** A signed-out client from its own address. */
  visitor(): FrontEnd;
  /** Registers and signs in a normal user from its own address. */
  user(username: string, password?: string): Promise<FrontEnd>;
  stop(): Promise<void>;
}

/**
 * A browser session of new-api's front end: a cookie jar (the session cookie and the OAuth state cookie
 * alike), New-Api-User and Cache-Control: no-store on every call, JSON bodies, its own client address.
 */
export class FrontEnd {
  readonly baseUrl: string;
  userId: number | undefined;
  readonly #jar = new Map<string, string>();
  readonly #headers: Record<string, string>;

  constructor(baseUrl: string, address: string) {
    this.baseUrl = baseUrl;
    this.#headers = { 'x-forwarded-for': address, 'cache-control': 'no-store', 'accept-language': 'en' };
  }

  /** The Cookie header this browser sends; assigning one replaces the jar (to copy a session). */
  get cookie(): string {
    return [...this.#jar].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  set cookie(header: string) {
    this.#jar.clear();
    for (const pair of header.split(';')) {
      const [name, ...value] = pair.trim().split('=');
      if (name) this.#jar.set(name, value.join('='));
    }
  }

  async call(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...this.#headers, ...extra };
    if (this.#jar.size > 0) headers.cookie = this.cookie;
    if (this.userId !== undefined && !('new-api-user' in extra)) headers['new-api-user'] = String(this.userId);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const [name = '', ...value] = pair.trim().split('=');
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value.join('=') === '';
      if (expired) this.#jar.delete(name);
      else this.#jar.set(name, value.join('='));
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed, headers: response.headers };
  }

  get = (path: string, extra?: Record<string, string>) => this.call('GET', path, undefined, extra);
  post = (path: string, body?: unknown) => this.call('POST', path, body ?? {});
  put = (path: string, body?: unknown) => this.call('PUT', path, body ?? {});
  /** axios' delete without data: no body and no content type. */
  delete = (path: string) => this.call('DELETE', path);

  /** Signs in as LoginForm.jsx does; afterwards every call carries New-Api-User. */
  async login(username: string, password: string): Promise<Answer> {
    const answer = await this.post('/api/user/login?turnstile=', { username, password });
    if (answer.body?.success) this.userId = answer.body.data.id;
    return answer;
  }
}

/**
 * Starts a gateway on a fresh database (the per-IP limits lifted so the files's many sign-ins never
 * trip them; each client still comes from its own address), runs setup as the front end's wizard does
 * and signs root in. `subnet` keeps files from sharing addresses.
 */
export async function startContractGateway(subnet: string, env: Record<string, string> = {}): Promise<ContractGateway> {
  const database = await createTestDatabase();
  const gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000', ...env }),
  );
  let counter = 0;
  const visitor = () => new FrontEnd(gateway.url, `${subnet}.${++counter}`);
  const root = visitor();
  const setup = await root.post('/api/setup', {
    username: 'root',
    password: 'root-password',
    confirmPassword: 'root-password',
    SelfUseModeEnabled: false,
    DemoSiteEnabled: false,
  });
  expectOk(setup);
  expectShape(expectOk(await root.login('root', 'root-password')), { id: 'integer', role: 'integer' }, 'root');
  const user = async (username: string, password = 'password-1') => {
    const registered = await visitor().post('/api/user/register', { username, password, password2: password });
    if (!registered.body?.success) throw new Error(`registering ${username}: ${JSON.stringify(registered.body)}`);
    const c = visitor();
    const signedIn = await c.login(username, password);
    if (!signedIn.body?.success) throw new Error(`signing in ${username}: ${JSON.stringify(signedIn.body)}`);
    return c;
  };
  return {
    gateway,
    url: gateway.url,
    root,
    visitor,
    user,
    async stop() {
      await gateway.stop();
      await database.drop();
    },
  };
}

const describeAnswer = (answer: Answer) => `HTTP ${answer.status} ${JSON.stringify(answer.body)}`;

/** A success as the front end reads it: HTTP 200, success true, a string message; returns `data`. */
export function expectOk(answer: Answer): any {
  expect(answer.status, describeAnswer(answer)).toBe(200);
  expect(answer.body?.success, describeAnswer(answer)).toBe(true);
  expect(typeof answer.body.message, describeAnswer(answer)).toBe('string');
  return answer.body.data;
}

/**
 * A business or validation refusal: HTTP 200 (the front end's axios handler would otherwise replace the
 * message with "Request failed with status code N"), success false, a message to toast, a stable code.
 */
export function expectRefusal(answer: Answer, code?: string | RegExp): void {
  expect(answer.status, describeAnswer(answer)).toBe(200);
  expect(answer.body?.success, describeAnswer(answer)).toBe(false);
  expect(typeof answer.body.message, describeAnswer(answer)).toBe('string');
  expect(answer.body.message.length, describeAnswer(answer)).toBeGreaterThan(0);
  expect(typeof answer.body.code, describeAnswer(answer)).toBe('string');
  expect(answer.body.code.length, describeAnswer(answer)).toBeGreaterThan(0);
  if (code !== undefined) expect(answer.body.code, describeAnswer(answer)).toMatch(code);
}

/** Not signed in (or the session does not match New-Api-User): HTTP 401, which sends the browser to /login. */
export function expectSignedOut(answer: Answer): void {
  expect(answer.status, describeAnswer(answer)).toBe(401);
  expect(answer.body?.success, describeAnswer(answer)).toBe(false);
}

function typeOf(value: unknown): FieldType[] {
  if (value === null) return ['null'];
  if (Array.isArray(value)) return ['array'];
  if (typeof value === 'number') return Number.isInteger(value) ? ['number', 'integer'] : ['number'];
  if (typeof value === 'string') {
    const kinds: FieldType[] = ['string'];
    if (value === '') return [...kinds, 'json-text'];
    try {
      const parsed = JSON.parse(value);
      kinds.push('json-text');
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) kinds.push('json-object-text');
    } catch {}
    return kinds;
  }
  return [typeof value as FieldType];
}

/** Every field of `shape` is present on `value` with one of the listed types (numbers, not numeric strings). */
export function expectShape(value: unknown, shape: Shape, where = 'value'): void {
  expect(value, `${where} is an object`).toBeTypeOf('object');
  expect(value, `${where} is not null`).not.toBeNull();
  const record = value as Record<string, unknown>;
  for (const [field, wanted] of Object.entries(shape)) {
    const allowed = Array.isArray(wanted) ? wanted : [wanted];
    expect(field in record, `${where}.${field} is present in ${JSON.stringify(record)}`).toBe(true);
    const actual = typeOf(record[field]);
    expect(
      allowed.some((type) => actual.includes(type)),
      `${where}.${field} = ${JSON.stringify(record[field])} should be ${allowed.join(' | ')}`,
    ).toBe(true);
  }
}

/** A paged answer: `data.items` (each of `itemShape`), numeric `total`, `page` and `page_size`. */
export function expectPage(data: any, itemShape: Shape, where = 'data'): any[] {
  expectShape(data, { items: 'array', total: 'integer', page: 'integer', page_size: 'integer' }, where);
  for (const [i, item] of (data.items as unknown[]).entries()) expectShape(item, itemShape, `${where}.items[${i}]`);
  return data.items;
}

/** The query string as the front end builds it: every filter present, empty ones as ''. */
export const query = (params: Record<string, string | number | boolean>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');
