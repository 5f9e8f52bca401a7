import type { ChannelSnapshot } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';
import { isRecord, videoImages, videoMetadata } from '../video-fields.ts';
import {
  errorObject,
  jsonRecord,
  refusalOf,
  type VideoAccepted,
  type VideoBytes,
  type VideoJob,
  type VideoPlan,
  type VideoRefusal,
  type VideoState,
  type VideoTaskRef,
  type VideoTasks,
} from '../video-tasks.ts';

/**
 * Google's Veo, the same long-running operation on the Gemini API and on Vertex AI: a
 * `predictLongRunning` submission of `{instances: [{prompt, image?}], parameters}` answered by an
 * operation's name, then asked after until `done`. What differs per host (auth, URLs, where the
 * finished video is) is the dialect's.
 */

/** Veo renders 8 seconds unless told otherwise (new-api bills the same default). */
const DEFAULT_SECONDS = 8;
const DEFAULT_RESOLUTION = '720p';
const RESOLUTIONS = ['720p', '1080p', '4k'];
const ASPECT_RATIOS = ['16:9', '9:16'];
/** The submission's parameters a client may set (camelCase in `metadata`, as Google names them). */
const PARAMETERS = [
  'aspectRatio',
  'negativePrompt',
  'personGeneration',
  'seed',
  'generateAudio',
  'enhancePrompt',
  'compressionQuality',
] as const;
/** The same parameters at the top level of new-api's generic video API, snake_case. */
const TOP_LEVEL: Record<string, (typeof PARAMETERS)[number]> = {
  aspect_ratio: 'aspectRatio',
  negative_prompt: 'negativePrompt',
  person_generation: 'personGeneration',
  seed: 'seed',
  generate_audio: 'generateAudio',
};

/** A Veo model: only these go to predictLongRunning (a chat model asked for through the video routes is refused). */
export const isVeoModel = (model: string) => /^veo-/.test(model.replace(/^models\//, ''));

/**
 * The price ratio of a resolution, by Google's price list relative to the model's 720p price (new-api's
 * table): 4K costs 1.5× on veo-3.1 and 2.333333× on veo-3.1-fast; 720p and 1080p cost the same.
 */
export function veoResolutionRatio(model: string, resolution: string): number {
  if (resolution !== '4k') return 1;
  if (model.includes('3.1-fast-generate')) return 2.333333;
  if (model.includes('3.1')) return 1.5;
  return 1;
}

/** A `WxH` size as Veo's resolution (by its longer side) and aspect ratio; undefined when it is not one. */
export function sizeToVeo(size: string): { resolution: string; aspectRatio: string } | undefined {
  const match = /^(\d+)x(\d+)$/i.exec(size.trim());
  if (!match) return undefined;
  const width = Number(match[1]);
  const height = Number(match[2]);
  if (width <= 0 || height <= 0) return undefined;
  const longer = Math.max(width, height);
  const resolution = longer >= 3840 ? '4k' : longer >= 1920 ? '1080p' : '720p';
  return { resolution, aspectRatio: height > width ? '9:16' : '16:9' };
}

/** The clip lengths a model renders: Veo 2 five to eight seconds, later models 4, 6 or 8. */
function secondsAllowed(model: string, seconds: number): boolean {
  if (!Number.isInteger(seconds)) return false;
  return /veo-2\./.test(model) ? seconds >= 5 && seconds <= 8 : [4, 6, 8].includes(seconds);
}

const given = (value: unknown) => value !== undefined && value !== null && value !== '';

/** What the submission asks for, checked before anything is charged. */
export interface VeoParams {
  seconds: number;
  /** The resolution billed (Google's default when none is asked for). */
  resolution: string;
  /** The parameters sent, besides durationSeconds and sampleCount. */
  parameters: Record<string, unknown>;
  /** The frame size the client named, shown on the video object. */
  size?: string;
  image?: string;
}

/**
 * The job's Veo parameters: `metadata` (Google's names) first, then the generic API's fields
 * (`seconds`/`duration`, `size`, `resolution`, snake_case aliases). A message when Google would refuse them.
 */
export function veoParams(job: VideoJob, options: { gcsImages: boolean }): VeoParams | string {
  const { fields } = job;
  const model = job.upstreamModel.replace(/^models\//, '');
  if (!isVeoModel(model)) {
    return `${job.model} is not a Veo video model: only veo-* models make videos on this channel`;
  }
  const metadata = videoMetadata(fields);
  if (typeof metadata === 'string') return metadata;
  const parameters: Record<string, unknown> = {};
  for (const [alias, name] of Object.entries(TOP_LEVEL)) if (given(fields[alias])) parameters[name] = fields[alias];
  for (const name of PARAMETERS) if (given(metadata[name])) parameters[name] = metadata[name];
  if (given(metadata.sampleCount) && Number(metadata.sampleCount) !== 1) {
    return 'one video per task: sampleCount must be 1';
  }

  const rawSeconds = [metadata.durationSeconds, fields.seconds].find(given);
  const seconds = rawSeconds === undefined ? DEFAULT_SECONDS : Number(rawSeconds);
  if (!secondsAllowed(model, seconds)) {
    return /veo-2\./.test(model) ? 'seconds must be from 5 to 8' : 'seconds must be 4, 6 or 8';
  }

  const size = given(fields.size) ? String(fields.size) : undefined;
  const fromSize = size === undefined ? undefined : sizeToVeo(size);
  if (size !== undefined && !fromSize) return 'size must be WIDTHxHEIGHT, e.g. 1280x720';
  const rawResolution = [metadata.resolution, fields.resolution].find(given);
  const resolution = rawResolution === undefined ? fromSize?.resolution : String(rawResolution).toLowerCase();
  if (resolution !== undefined) {
    if (!RESOLUTIONS.includes(resolution)) return `resolution must be one of ${RESOLUTIONS.join(', ')}`;
    parameters.resolution = resolution;
  }
  if (parameters.aspectRatio === undefined && fromSize) parameters.aspectRatio = fromSize.aspectRatio;
  if (parameters.aspectRatio !== undefined && !ASPECT_RATIOS.includes(String(parameters.aspectRatio))) {
    return `aspect_ratio must be one of ${ASPECT_RATIOS.join(', ')}`;
  }

  const images = videoImages(fields);
  if (typeof images === 'string') return images;
  if (images.length > 1) return 'Veo takes one image, the first frame';
  const [image] = images;
  if (image !== undefined) {
    const inline = /^data:image\/[\w.+-]+;base64,/.test(image);
    if (!inline && !(options.gcsImages && image.startsWith('gs://'))) {
      return options.gcsImages
        ? 'image must be a data: URL (base64) or a gs:// URI'
        : 'image must be a data: URL (base64)';
    }
  }
  const params: VeoParams = { seconds, resolution: resolution ?? DEFAULT_RESOLUTION, parameters };
  if (size !== undefined) params.size = size;
  if (image !== undefined) params.image = image;
  return params;
}

/** The job's price ratios (new-api's: the seconds, and the resolution's) and what its video object shows. */
export function veoPlan(job: VideoJob, options: { gcsImages: boolean }): VideoPlan | string {
  const params = veoParams(job, options);
  if (typeof params === 'string') return params;
  return {
    ratios: { seconds: params.seconds, resolution: veoResolutionRatio(job.upstreamModel, params.resolution) },
    seconds: String(params.seconds),
    size: params.size ?? params.resolution,
  };
}

const MIME_BY_EXTENSION: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg' };

/** The first frame as Veo takes it: inline base64, or (Vertex) a Cloud Storage URI. */
async function veoImage(job: VideoJob, params: VeoParams): Promise<Record<string, string> | undefined> {
  const file = job.form?.get('input_reference');
  if (file instanceof Blob) {
    const bytes = Buffer.from(await file.arrayBuffer());
    return { bytesBase64Encoded: bytes.toString('base64'), mimeType: file.type || 'image/png' };
  }
  if (params.image === undefined) return undefined;
  const inline = /^data:(image\/[\w.+-]+);base64,(.*)$/s.exec(params.image);
  if (inline) return { bytesBase64Encoded: inline[2]!, mimeType: inline[1]! };
  const extension = params.image.split('.').at(-1)?.toLowerCase() ?? '';
  return { gcsUri: params.image, mimeType: MIME_BY_EXTENSION[extension] ?? 'image/png' };
}

/** The predictLongRunning body: one instance, one sample (one video per task, billed once). */
export async function veoBody(job: VideoJob, options: { gcsImages: boolean }): Promise<string> {
  const params = veoParams(job, options);
  if (typeof params === 'string') throw new Error(params);
  const image = await veoImage(job, params);
  return JSON.stringify({
    instances: [{ prompt: job.prompt, ...(image ? { image } : {}) }],
    parameters: { ...params.parameters, durationSeconds: params.seconds, sampleCount: 1 },
  });
}

/** Google's error body `{error: {code, message, status}}` as a refusal, or the status and the start of the body. */
export function googleRefusalOf(status: number, body: string): VideoRefusal {
  return refusalOf(status, body, (text) => {
    const error = errorObject(text);
    return error && { code: error.status, message: error.message };
  });
}

/** A finished operation's video as the dialect finds it: where it is, or why there is none. */
export type VeoFinished = { url?: string } | { failure: string };

/** Why a finished operation has no video: Google's safety filters, when they say so. */
export function filteredReason(response: Record<string, unknown>): string {
  const reasons = Array.isArray(response.raiMediaFilteredReasons) ? response.raiMediaFilteredReasons : [];
  if (reasons.length > 0) return reasons.map(String).join('; ');
  const count = Number(response.raiMediaFilteredCount ?? 0);
  return count > 0 ? `${count} video(s) filtered by Google's safety filters` : 'Google returned no video';
}

/** A long-running operation's state: running until `done`, then failed with its error or finished. */
export function operationState(
  status: number,
  body: string,
  finished: (response: Record<string, unknown>) => VeoFinished,
): VideoState | undefined {
  const operation = status === 200 ? jsonRecord(body) : undefined;
  if (!operation || typeof operation.name !== 'string') return undefined;
  const error = isRecord(operation.error) ? operation.error : undefined;
  if (error) {
    const message =
      typeof error.message === 'string' && error.message !== '' ? error.message : 'video generation failed';
    return { status: 'FAILURE', progress: '100%', failReason: message };
  }
  // Veo reports no progress while it renders: halfway until done (as new-api shows it).
  if (operation.done !== true) return { status: 'IN_PROGRESS', progress: '50%', failReason: '' };
  const video = finished(isRecord(operation.response) ? operation.response : {});
  if ('failure' in video) return { status: 'FAILURE', progress: '100%', failReason: video.failure };
  return { status: 'SUCCESS', progress: '100%', failReason: '', ...(video.url ? { url: video.url } : {}) };
}

/** What a host does its own way: URLs and auth, and where a finished video is. */
export interface VeoDialect {
  /** Whether images may be Cloud Storage URIs the upstream reads itself (Vertex). */
  gcsImages: boolean;
  /** `…/models/{model}:predictLongRunning`, authorized as far as building it can. */
  submitRequest(channel: ChannelSnapshot, key: string, model: string, body: string): UpstreamRequest;
  /** The status request for an operation. */
  queryRequest(channel: ChannelSnapshot, key: string, task: VideoTaskRef): UpstreamRequest;
  finished(response: Record<string, unknown>): VeoFinished;
  content(channel: ChannelSnapshot, key: string, task: VideoTaskRef, variant: string): UpstreamRequest | undefined;
  contentBytes?(body: string): VideoBytes | string;
  send?: VideoTasks['send'];
}

/** Veo's video tasks on a host. */
export function veoVideo(dialect: VeoDialect): VideoTasks {
  const options = { gcsImages: dialect.gcsImages };
  const tasks: VideoTasks = {
    plan: (job) => veoPlan(job, options),
    async submit(channel, key, job) {
      const model = job.upstreamModel.replace(/^models\//, '');
      return dialect.submitRequest(channel, key, model, await veoBody(job, options));
    },
    accepted(status, body): VideoAccepted | VideoRefusal {
      const operation = status === 200 ? jsonRecord(body) : undefined;
      if (!operation || typeof operation.name !== 'string' || operation.name === '') {
        return googleRefusalOf(status, body);
      }
      return { id: operation.name, state: { status: 'SUBMITTED', progress: '0%', failReason: '' } };
    },
    query: async (channel, key, task) => dialect.queryRequest(channel, key, task),
    state: (status, body) => operationState(status, body, dialect.finished),
    content: async (channel, key, task, variant) => dialect.content(channel, key, task, variant),
  };
  if (dialect.contentBytes) tasks.contentBytes = dialect.contentBytes;
  if (dialect.send) tasks.send = dialect.send;
  return tasks;
}
