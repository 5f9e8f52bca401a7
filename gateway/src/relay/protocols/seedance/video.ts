import type { ChannelSnapshot } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';
import { channelBase, isRecord, videoImages } from '../video-fields.ts';
import {
  errorObject,
  jsonPost,
  jsonRecord,
  percent,
  refusalOf,
  type VideoAccepted,
  type VideoJob,
  type VideoPlan,
  type VideoRefusal,
  type VideoState,
  type VideoStatus,
  type VideoTasks,
} from '../video-tasks.ts';

/** What Ark's Seedance models render: clip length, resolution tiers and frame ratios. */
const MIN_SECONDS = 2;
const MAX_SECONDS = 15;
const DEFAULT_SECONDS = 5;
export const SEEDANCE_RESOLUTIONS = ['480p', '720p', '1080p'] as const;
const DEFAULT_RESOLUTION = '720p';
export const SEEDANCE_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'] as const;
const MEDIA_TYPES = ['image_url', 'video_url', 'audio_url'] as const;

/**
 * Ark's price per million tokens of the Seedance 2.0 models by output tier (new-api's table): a
 * 1080p clip costs more, a clip made from a reference video less. The model's ModelRatio is set at
 * the 480p/720p text-only price; the task's `video_input` ratio is the tier's price over that one.
 */
const TIER_PRICES: Record<string, { base: number; withVideo: number; hd?: number; hdWithVideo?: number }> = {
  'doubao-seedance-2-0-260128': { base: 46, withVideo: 28, hd: 51, hdWithVideo: 31 },
  'doubao-seedance-2-0-fast-260128': { base: 37, withVideo: 22 },
};

/** The `video_input` ratio of a model's tier; 1 for models without tiers or tiers without a price. */
export function seedanceTierRatio(model: string, resolution: string, hasVideo: boolean): number {
  const prices = TIER_PRICES[model];
  if (!prices) return 1;
  const price =
    resolution === '1080p' ? (hasVideo ? prices.hdWithVideo : prices.hd) : hasVideo ? prices.withVideo : prices.base;
  return price === undefined ? 1 : price / prices.base;
}

type MediaItem = { type: string; role?: string } & Record<string, unknown>;

export interface SeedanceParams {
  seconds: number;
  resolution: string;
  ratio?: string;
  seed?: number;
  cameraFixed?: boolean;
  watermark?: boolean;
  media: MediaItem[];
}

/** The first of a field's spellings the client set: top level first, then new-api's `metadata`. */
function pick(fields: Record<string, unknown>, ...names: string[]): unknown {
  const metadata = isRecord(fields.metadata) ? fields.metadata : {};
  for (const source of [fields, metadata]) {
    for (const name of names) {
      const value = source[name];
      if (value !== undefined && value !== null && value !== '') return value;
    }
  }
  return undefined;
}

/** Reference media: `metadata.content`'s image/video/audio items as Ark names them, or the generic `image(s)`. */
function readMedia(fields: Record<string, unknown>): MediaItem[] | string {
  const metadata = isRecord(fields.metadata) ? fields.metadata : {};
  if (Array.isArray(metadata.content)) {
    const items: MediaItem[] = [];
    for (const item of metadata.content) {
      if (!isRecord(item) || item.type === 'text') continue;
      const type = MEDIA_TYPES.find((name) => item.type === name || isRecord(item[name]));
      const media = type && item[type];
      if (!type || !isRecord(media) || typeof media.url !== 'string' || media.url === '') {
        return 'metadata.content items must be image_url, video_url or audio_url objects with a url';
      }
      items.push({
        type,
        [type]: { url: media.url },
        ...(typeof item.role === 'string' && item.role !== '' ? { role: item.role } : {}),
      });
    }
    return items;
  }
  const images = videoImages(fields);
  if (typeof images === 'string') return images;
  // Two images are the first and the last frame; one is the first frame Ark animates.
  const roles = images.length === 2 ? ['first_frame', 'last_frame'] : [];
  return images.map((url, index) => ({
    type: 'image_url',
    image_url: { url },
    ...(roles[index] ? { role: roles[index] } : {}),
  }));
}

const flag = (value: unknown): boolean | undefined | string => {
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return 'must be true or false';
};

/** The submission's parameters, checked as Ark checks them; an error message when Ark would refuse them. */
export function seedanceParams(fields: Record<string, unknown>): SeedanceParams | string {
  const rawSeconds = pick(fields, 'seconds', 'duration');
  const seconds = rawSeconds === undefined ? DEFAULT_SECONDS : Number(rawSeconds);
  if (!Number.isInteger(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) {
    return `duration must be a whole number of seconds from ${MIN_SECONDS} to ${MAX_SECONDS}`;
  }
  const size = typeof fields.size === 'string' && /^\d+p$/i.test(fields.size) ? fields.size : undefined;
  const resolution = String(pick(fields, 'resolution') ?? size ?? DEFAULT_RESOLUTION).toLowerCase();
  if (!(SEEDANCE_RESOLUTIONS as readonly string[]).includes(resolution)) {
    return `resolution must be one of ${SEEDANCE_RESOLUTIONS.join(', ')}`;
  }
  const ratio = pick(fields, 'ratio', 'aspect_ratio');
  if (ratio !== undefined && !(SEEDANCE_RATIOS as readonly string[]).includes(String(ratio))) {
    return `ratio must be one of ${SEEDANCE_RATIOS.join(', ')}`;
  }
  const rawSeed = pick(fields, 'seed');
  const seed = rawSeed === undefined ? undefined : Number(rawSeed);
  if (seed !== undefined && (!Number.isInteger(seed) || seed < -1 || seed > 2 ** 32 - 1)) {
    return 'seed must be an integer from -1 to 4294967295';
  }
  const cameraFixed = flag(pick(fields, 'camera_fixed', 'camerafixed'));
  if (typeof cameraFixed === 'string') return `camera_fixed ${cameraFixed}`;
  const watermark = flag(pick(fields, 'watermark'));
  if (typeof watermark === 'string') return `watermark ${watermark}`;
  const media = readMedia(fields);
  if (typeof media === 'string') return media;
  return {
    seconds,
    resolution,
    media,
    ...(ratio !== undefined ? { ratio: String(ratio) } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(cameraFixed !== undefined ? { cameraFixed } : {}),
    ...(watermark !== undefined ? { watermark } : {}),
  };
}

/** The prompt with Ark's text commands (`--duration 5 --resolution 720p …`) that set the output. */
export function seedanceText(prompt: string, params: SeedanceParams): string {
  const commands = [`--resolution ${params.resolution}`, `--duration ${params.seconds}`];
  if (params.ratio) commands.push(`--ratio ${params.ratio}`);
  if (params.seed !== undefined) commands.push(`--seed ${params.seed}`);
  if (params.cameraFixed !== undefined) commands.push(`--camerafixed ${params.cameraFixed}`);
  if (params.watermark !== undefined) commands.push(`--watermark ${params.watermark}`);
  return `${prompt.trim()} ${commands.join(' ')}`;
}

const tasksUrl = (channel: Pick<ChannelSnapshot, 'baseUrl' | 'type'>, id?: string) =>
  `${channelBase(channel)}/api/v3/contents/generations/tasks${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, accept: 'application/json' });

const UPSTREAM_STATUS: Record<string, { status: VideoStatus; progress: number }> = {
  queued: { status: 'QUEUED', progress: 10 },
  running: { status: 'IN_PROGRESS', progress: 50 },
  succeeded: { status: 'SUCCESS', progress: 100 },
  failed: { status: 'FAILURE', progress: 100 },
  cancelled: { status: 'FAILURE', progress: 100 },
  expired: { status: 'FAILURE', progress: 100 },
};

/** Ark's task object in the gateway's statuses, with the finished video and the tokens it used. */
export function readSeedanceTask(value: unknown): VideoState | undefined {
  if (!isRecord(value) || typeof value.id !== 'string') return undefined;
  const known = UPSTREAM_STATUS[String(value.status)];
  if (!known) return undefined;
  const { status } = known;
  const error = isRecord(value.error) ? value.error : undefined;
  const content = isRecord(value.content) ? value.content : undefined;
  const usage = isRecord(value.usage) ? value.usage : undefined;
  const tokens = Number(usage?.total_tokens);
  return {
    status,
    progress: percent(status, known.progress),
    failReason: status === 'FAILURE' ? String(error?.message || `the task was ${value.status} upstream`) : '',
    ...(status === 'SUCCESS' && typeof content?.video_url === 'string' ? { url: content.video_url } : {}),
    ...(status === 'SUCCESS' && Number.isInteger(tokens) && tokens > 0 ? { totalTokens: tokens } : {}),
  };
}

/**
 * Doubao Seedance on Volcengine Ark (DoubaoVideo, type 54): `POST /api/v3/contents/generations/tasks`
 * with the prompt and its text commands plus reference media, then `GET …/tasks/{id}` until it ends;
 * the finished task's `usage.total_tokens` settles a task priced by model ratio.
 */
export const seedanceVideo: VideoTasks = {
  plan(job: VideoJob): VideoPlan | string {
    const params = seedanceParams(job.fields);
    if (typeof params === 'string') return params;
    const ratio = seedanceTierRatio(
      job.model,
      params.resolution,
      params.media.some((item) => item.type === 'video_url'),
    );
    return {
      ratios: ratio === 1 ? {} : { video_input: ratio },
      seconds: String(params.seconds),
      size: params.resolution,
    };
  },

  async submit(channel, key, job) {
    const params = seedanceParams(job.fields);
    if (typeof params === 'string') throw new Error(params);
    return jsonPost(tasksUrl(channel), bearer(key), {
      model: job.upstreamModel,
      content: [{ type: 'text', text: seedanceText(job.prompt, params) }, ...params.media],
    });
  },

  accepted(status, body): VideoAccepted | VideoRefusal {
    const answer = jsonRecord(body);
    if (status !== 200 || typeof answer?.id !== 'string' || answer.id === '')
      return refusalOf(status, body, errorObject);
    return { id: answer.id, state: { status: 'SUBMITTED', progress: '0%', failReason: '' } };
  },

  async query(channel, key, task): Promise<UpstreamRequest> {
    return { url: tasksUrl(channel, task.upstreamId), method: 'GET', headers: bearer(key) };
  },

  state(status, body) {
    return status === 200 ? readSeedanceTask(jsonRecord(body)) : undefined;
  },
};
