/**
 * A dashboard client as the console is: it keeps the session cookie and sends New-Api-User on every
 * call. Answers are parsed JSON plus the HTTP status.
 */
export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

export class DashboardClient {
  readonly baseUrl: string;
  cookie = '';
  userId: number | undefined;
  /** Extra headers on every call, e.g. X-Forwarded-For to act as another client address. */
  headers: Record<string, string>;

  constructor(baseUrl: string, headers: Record<string, string> = {}) {
    this.baseUrl = baseUrl;
    this.headers = { 'accept-language': 'en', ...headers };
  }

  async call(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...this.headers, ...extra };
    if (this.cookie) headers.cookie = this.cookie;
    if (this.userId !== undefined && !('new-api-user' in headers)) headers['new-api-user'] = String(this.userId);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const setCookie = response.headers.getSetCookie().find((c) => c.startsWith('session='));
    if (setCookie) this.cookie = setCookie.split(';')[0] ?? '';
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  }

  get = (path: string, extra?: Record<string, string>) => this.call('GET', path, undefined, extra);
  post = (path: string, body?: unknown) => this.call('POST', path, body ?? {});
  put = (path: string, body?: unknown) => this.call('PUT', path, body ?? {});
  delete = (path: string, body?: unknown) => this.call('DELETE', path, body);

  /** Signs in; afterwards every call carries the session cookie and the user id header. */
  async login(username: string, password: string): Promise<Answer> {
    const answer = await this.post('/api/user/login', { username, password });
    if (answer.body?.success) this.userId = answer.body.data.id;
    return answer;
  }
}

/** Creates the root account through first-run setup and returns a client signed in as root. */
export async function setupRoot(baseUrl: string, password = 'root-password'): Promise<DashboardClient> {
  const root = new DashboardClient(baseUrl);
  const setup = await root.post('/api/setup', { username: 'root', password, confirmPassword: password });
  if (!setup.body?.success) throw new Error(`setup failed: ${JSON.stringify(setup.body)}`);
  const login = await root.login('root', password);
  if (!login.body?.success) throw new Error(`root login failed: ${JSON.stringify(login.body)}`);
  return root;
}

/**
 * Clients that each come from their own address (the gateway must run with TRUST_PROXY=true), so the
 * per-IP sign-in limit never spills between tests; `user` registers and signs in a normal user.
 */
export function clientsFrom(baseUrl: () => string, subnet: string) {
  let counter = 0;
  const client = () => new DashboardClient(baseUrl(), { 'x-forwarded-for': `${subnet}.${++counter}` });
  const user = async (username: string, password = 'password-1'): Promise<DashboardClient> => {
    const registered = await client().post('/api/user/register', { username, password });
    if (!registered.body?.success)
      throw new Error(`registering ${username} failed: ${JSON.stringify(registered.body)}`);
    const c = client();
    const login = await c.login(username, password);
    if (!login.body?.success) throw new Error(`signing in ${username} failed: ${JSON.stringify(login.body)}`);
    return c;
  };
  return { client, user };
}

/**
 * An /api refusal as new-api answers it: HTTP 200 and success:false (its web front end signs the user out
 * on a 401 and hides our message behind "status code N" on any other non-200), with our stable code.
 */
export function refusalOf(answer: Answer): { status: number; success: unknown; code: unknown } {
  return { status: answer.status, success: answer.body?.success, code: answer.body?.code };
}
