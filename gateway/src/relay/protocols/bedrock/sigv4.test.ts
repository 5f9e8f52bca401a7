import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { HttpRequest } from '@smithy/types';
import { describe, expect, it } from 'vitest';
import type { UpstreamRequest } from '../types.ts';
import { signSigV4 } from './sigv4.ts';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const date = new Date('2025-03-04T05:06:07Z');

/** What AWS's own signer (@smithy/signature-v4) puts in `authorization` for the same request. */
async function awsSignature(request: UpstreamRequest, region: string, sessionToken?: string): Promise<string> {
  const url = new URL(request.url);
  const query: Record<string, string[]> = {};
  for (const name of new Set(url.searchParams.keys())) query[name] = url.searchParams.getAll(name);
  const signer = new SignatureV4({
    service: 'bedrock',
    region,
    credentials: { ...credentials, ...(sessionToken ? { sessionToken } : {}) },
    sha256: Sha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      path: url.pathname,
      query,
      headers: { ...request.headers, host: url.host },
      body: request.body,
    } as unknown as HttpRequest,
    { signingDate: date },
  );
  return signed.headers.authorization ?? '';
}

const post = (url: string, body = '{"messages":[]}', headers: Record<string, string> = {}): UpstreamRequest => ({
  url,
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
  body,
});

describe('SigV4 signer', () => {
  it.each([
    [
      'an encoded Claude model id',
      post('https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke'),
    ],
    [
      'an inference profile id',
      post(
        'https://bedrock-runtime.eu-west-3.amazonaws.com/model/eu.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream',
      ),
    ],
    [
      'an ARN with encoded slashes',
      post(
        'https://bedrock-runtime.us-west-2.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A123%3Ainference-profile%2Fus.amazon.nova-pro-v1%3A0/converse',
      ),
    ],
    [
      'a query string to sort and encode',
      post('https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke?b=2&a=x%20y&a=%21star*&c='),
    ],
    [
      'a base URL with a port and path',
      post('http://127.0.0.1:8443/proxy/./bedrock/../model/amazon.nova-lite-v1%3A0/converse'),
    ],
    [
      'headers with spaces and capitals',
      post('https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke', '{}', {
        'X-Custom': '  a   b  ',
        'User-Agent': 'ours',
      }),
    ],
    [
      'a body of bytes in UTF-8',
      post('https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke', '{"text":"héllo ✓"}'),
    ],
  ])('signs %s as AWS’s own signer does', async (_name, request) => {
    const region = new URL(request.url).hostname.split('.')[1] ?? 'us-east-1';
    const ours = signSigV4(request, credentials, { region, service: 'bedrock', date });
    expect(ours.headers.authorization).toBe(await awsSignature(request, region));
    expect(ours.headers['x-amz-date']).toBe('20250304T050607Z');
  });

  it('signs the session token of temporary credentials', async () => {
    const request = post('https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke');
    const ours = signSigV4(
      request,
      { ...credentials, sessionToken: 'token/+=' },
      { region: 'us-east-1', service: 'bedrock', date },
    );
    expect(ours.headers['x-amz-security-token']).toBe('token/+=');
    expect(ours.headers.authorization).toBe(await awsSignature(request, 'us-east-1', 'token/+='));
  });

  it('names the scope and the signed headers, and never signs user-agent or content-length', () => {
    const request = post('https://h.example/model/m/invoke', '{}', { 'user-agent': 'x', 'content-length': '2' });
    const { authorization } = signSigV4(request, credentials, {
      region: 'ap-south-1',
      service: 'bedrock',
      date,
    }).headers;
    expect(authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20250304\/ap-south-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
  });

  it('gives another signature for another secret or body', () => {
    const request = post('https://h.example/model/m/invoke');
    const scope = { region: 'us-east-1', service: 'bedrock', date };
    const base = signSigV4(request, credentials, scope).headers.authorization;
    expect(signSigV4(request, { ...credentials, secretAccessKey: 'other' }, scope).headers.authorization).not.toBe(
      base,
    );
    expect(signSigV4({ ...request, body: '{}' }, credentials, scope).headers.authorization).not.toBe(base);
  });
});
