import { describe, expect, it } from 'vitest';
import { verifyVolcSignature } from '../../../../../tests/support/mock-jimeng.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { sha256Hex, volcSign } from './sign.ts';
import { jimengParams, jimengVideo, readJimengResult, signedJimengRequest } from './video.ts';

const AK = 'AKLTexampleAccessKeyId';
const SK = 'ZXhhbXBsZVNlY3JldEFjY2Vzc0tleQ==';
const AT = new Date('2026-11-26T06:00:00Z');

/**
 * Requests signed by Volcengine's official Node signer (`Signer` of @volcengine/openapi 1.36.2, service
 * `cv`, region cn-north-1, at AT). The package is not a dependency (49 packages, 17 MB, axios 0.21):
 * these are its outputs, recorded once, that our signer must reproduce and the mock must accept.
 */
const OFFICIAL: Array<{ target: string; body: string; headers: Record<string, string> & { authorization: string } }> = [
  {
    target: '/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31',
    body: '{"req_key":"jimeng_vgfm_t2v_l20","prompt":"a red fox in fresh snow","seed":-1,"aspect_ratio":"16:9"}',
    headers: {
      host: 'visual.volcengineapi.com',
      'content-type': 'application/json',
      'x-date': '20261126T060000Z',
      'x-content-sha256': '5c147d8163b824756cf5a94d5e94937a303a1941e74e8274f7ab0e1fcf722fa0',
      authorization:
        'HMAC-SHA256 Credential=AKLTexampleAccessKeyId/20261126/cn-north-1/cv/request, SignedHeaders=host;x-content-sha256;x-date, Signature=2c6acbb53ec1a5888cf658f62943c87498752acc70a266aa665c054e51100fc7',
    },
  },
  {
    target: '/?Action=CVSync2AsyncGetResult&Version=2022-08-31',
    body: '{"req_key":"jimeng_vgfm_t2v_l20","task_id":"7392616336519610409"}',
    headers: {
      host: '127.0.0.1:8080',
      'x-date': '20261126T060000Z',
      'x-content-sha256': '67cdf273f6c42dee0439e6e846b8ec2f570cf6d2fe0367e120f0cadd9b028633',
      authorization:
        'HMAC-SHA256 Credential=AKLTexampleAccessKeyId/20261126/cn-north-1/cv/request, SignedHeaders=host;x-content-sha256;x-date, Signature=5eabc005d6d18faf6f6d7f4bb0ae736bfb702505011d271a219d8842fd39072e',
    },
  },
];

const verify = (target: string, headers: Record<string, string>, body: string, now = AT.getTime()) =>
  verifyVolcSignature({
    method: 'POST',
    target,
    headers,
    body: Buffer.from(body),
    secrets: new Map([[AK, SK]]),
    region: 'cn-north-1',
    service: 'cv',
    now,
  });

describe('Volcengine HMAC-SHA256 signing', () => {
  it("reproduces the official signer's Authorization, X-Date and body hash", () => {
    for (const request of OFFICIAL) {
      const signed = volcSign({
        accessKey: AK,
        secretKey: SK,
        region: 'cn-north-1',
        service: 'cv',
        method: 'POST',
        url: new URL(`http://${request.headers.host}${request.target}`),
        headers: {},
        body: request.body,
        now: AT,
      });
      expect(signed).toEqual({
        'x-date': request.headers['x-date'],
        'x-content-sha256': request.headers['x-content-sha256'],
        authorization: request.headers.authorization,
      });
    }
  });

  it("the mock accepts the official signer's requests and refuses them altered, late or under another key", () => {
    for (const request of OFFICIAL) expect(verify(request.target, request.headers, request.body)).toBeUndefined();
    const [submit] = OFFICIAL;
    const { target, headers, body } = submit!;
    expect(verify(target, headers, body.replace('fox', 'cat'))?.code).toBe('SignatureDoesNotMatch');
    expect(verify(target.replace('Submit', 'Get'), headers, body)?.code).toBe('SignatureDoesNotMatch');
    expect(verify(target, { ...headers, host: 'other.example' }, body)?.code).toBe('SignatureDoesNotMatch');
    expect(verify(target, headers, body, AT.getTime() + 16 * 60_000)?.code).toBe('InvalidTimestamp');
    const otherKey = headers.authorization.replace(AK, 'AKLTsomeoneElse');
    expect(verify(target, { ...headers, authorization: otherKey }, body)?.code).toBe('InvalidAccessKey');
    expect(verify(target, { ...headers, authorization: 'Bearer x' }, body)?.code).toBe('MissingAuthenticationToken');
  });

  it('signs the visual API calls with content-type too, and the mock checks them', () => {
    const channel = { type: 51, baseUrl: 'https://visual.volcengineapi.com/' } as ChannelSnapshot;
    const request = signedJimengRequest(channel, ` ${AK} | ${SK} `, 'CVSync2AsyncSubmitTask', { req_key: 'x' }, AT);
    expect(request.url).toBe('https://visual.volcengineapi.com/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31');
    expect(request.headers.authorization).toMatch(
      /^HMAC-SHA256 Credential=AKLTexampleAccessKeyId\/20261126\/cn-north-1\/cv\/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=[0-9a-f]{64}$/,
    );
    expect(request.headers['x-content-sha256']).toBe(sha256Hex(String(request.body)));
    const headers = { ...request.headers, host: 'visual.volcengineapi.com' };
    expect(verify('/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31', headers, String(request.body))).toBeUndefined();
    expect(() => signedJimengRequest(channel, 'only-one-part', 'X', {}, AT)).toThrow(/AccessKeyID\|SecretAccessKey/);
  });
});

describe('Jimeng wire', () => {
  it('maps seconds to frames and images to URLs or bare base64, refusing what Jimeng refuses', () => {
    expect(jimengParams({})).toEqual({ seconds: '5', frames: 121, aspectRatio: '16:9', seed: -1 });
    expect(jimengParams({ seconds: '10', aspect_ratio: '9:16', seed: 7 })).toMatchObject({ frames: 241, seed: 7 });
    expect(jimengParams({ frames: 241 })).toMatchObject({ seconds: '10' });
    expect(jimengParams({ images: ['https://img.example/a.png'] })).toMatchObject({
      imageUrls: ['https://img.example/a.png'],
    });
    expect(jimengParams({ image: 'data:image/png;base64,AAAA' })).toMatchObject({ binaryDataBase64: ['AAAA'] });
    expect(jimengParams({ seconds: '7' })).toBe('duration must be 5 or 10 seconds');
    expect(jimengParams({ frames: 300 })).toMatch(/^frames must be/);
    expect(jimengParams({ aspect_ratio: '2:1' })).toMatch(/^aspect_ratio must be/);
    expect(jimengParams({ image_urls: 'x' })).toBe('image_urls must be a list of URLs');
  });

  it('is billed per call, showing the seconds and the aspect ratio', () => {
    const job = { model: 'm', upstreamModel: 'm', prompt: 'p', fields: { seconds: '10' }, action: 'GENERATE' };
    expect(jimengVideo.plan(job)).toEqual({ ratios: {}, seconds: '10', size: '16:9' });
  });

  it('reads submissions and results', () => {
    const ok = JSON.stringify({ code: 10000, message: 'Success', data: { task_id: '42' } });
    expect(jimengVideo.accepted(200, ok)).toEqual({
      id: '42',
      state: { status: 'SUBMITTED', progress: '0%', failReason: '' },
    });
    expect(jimengVideo.accepted(200, JSON.stringify({ code: 50411, message: 'Pre Img Risk Not Pass' }))).toEqual({
      refused: true,
      status: 400,
      code: '50411',
      message: 'Pre Img Risk Not Pass',
    });
    const denied = { ResponseMetadata: { Error: { Code: 'SignatureDoesNotMatch', Message: 'bad signature' } } };
    expect(jimengVideo.accepted(401, JSON.stringify(denied))).toMatchObject({
      status: 401,
      code: 'SignatureDoesNotMatch',
    });
    const result = (data: unknown, code = 10000, message = 'Success') => JSON.stringify({ code, message, data });
    expect(readJimengResult(200, result({ status: 'in_queue' }))).toMatchObject({ status: 'QUEUED' });
    expect(readJimengResult(200, result({ status: 'generating' }))).toMatchObject({ status: 'IN_PROGRESS' });
    expect(readJimengResult(200, result({ status: 'done', video_url: 'https://v/1.mp4' }))).toEqual({
      status: 'SUCCESS',
      progress: '100%',
      failReason: '',
      url: 'https://v/1.mp4',
    });
    expect(readJimengResult(200, result({ status: 'expired' }))).toMatchObject({ status: 'FAILURE' });
    expect(readJimengResult(200, result(null, 50413, 'Post Text Risk Not Pass'))).toMatchObject({
      status: 'FAILURE',
      failReason: 'Post Text Risk Not Pass',
    });
    // Limits, outages and signature errors say nothing about the task: it is asked again later.
    expect(readJimengResult(200, result(null, 50429, 'QPS limit'))).toBeUndefined();
    expect(readJimengResult(500, result(null, 50400, 'oops'))).toBeUndefined();
    expect(readJimengResult(401, JSON.stringify(denied))).toBeUndefined();
  });
});
