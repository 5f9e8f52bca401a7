import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A message as the local SMTP server received it, decoded enough to read codes and links. */
export interface Received {
  from: string;
  to: string[];
  subject: string;
  body: string;
  auth: { username?: string; password?: string } | undefined;
}

export interface SmtpInbox {
  port: number;
  /** The gateway options that send mail to this inbox. */
  options: Readonly<
    Record<'SMTPServer' | 'SMTPPort' | 'SMTPAccount' | 'SMTPToken' | 'SMTPFrom' | 'SMTPSSLEnabled', string>
  >;
  /** Every message received so far, oldest first. */
  inbox: Received[];
  close(): Promise<void>;
}

/** A real SMTP server on loopback that keeps what it receives, for tests of the gateway's mail. */
export async function startSmtpInbox(): Promise<SmtpInbox> {
  const inbox: Received[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    // The test server speaks plain SMTP: no STARTTLS to offer, and AUTH allowed without it.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: { username: auth.username, password: auth.password } });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          subject: header(raw, 'Subject'),
          body: decodeParts(raw),
          auth: session.user as Received['auth'],
        });
        callback();
      });
    },
  });
  smtp.listen(0, '127.0.0.1');
  await once(smtp.server, 'listening');
  const port = (smtp.server.address() as AddressInfo).port;
  return {
    port,
    options: {
      SMTPServer: '127.0.0.1',
      SMTPPort: String(port),
      SMTPAccount: 'mailer@tollgate.test',
      SMTPToken: 'smtp-secret',
      SMTPFrom: 'noreply@tollgate.test',
      SMTPSSLEnabled: 'false',
    },
    inbox,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}

function header(raw: string, name: string): string {
  const head = raw.split('\r\n\r\n')[0] ?? '';
  const line = head.match(new RegExp(`^${name}: (.*(?:\\r\\n[ \\t].*)*)`, 'mi'))?.[1] ?? '';
  return line.replace(/\r\n[ \t]/g, ' ');
}

/** Every leaf part's body, decoded from quoted-printable or base64, so the tests can read codes and links. */
function decodeParts(raw: string): string {
  const parts = raw.matchAll(/Content-Transfer-Encoding: ([\w-]+)\r\n(?:[^\r\n]+\r\n)*\r\n([\s\S]*?)(?=\r\n--|$)/gi);
  return [...parts]
    .map(([, encoding, body = '']) => {
      switch (encoding?.toLowerCase()) {
        case 'quoted-printable':
          return Buffer.from(
            body
              .replace(/=\r\n/g, '')
              .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
            'latin1',
          ).toString('utf8');
        case 'base64':
          return Buffer.from(body.replace(/\s/g, ''), 'base64').toString('utf8');
        default:
          return body;
      }
    })
    .join('\n');
}
