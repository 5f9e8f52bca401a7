import { channelType } from '../../domain/channels/registry.ts';
import type { ChannelSnapshot } from '../types.ts';

/**
 * Reading the generic video API's fields the way the task vendors take them (Vidu, MiniMax Hailuo,
 * Ali Wan): reference images, vendor extras under `metadata`, whole seconds, and the channel's base URL.
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The reference images, `images` (a list) or one `image`; an error message when they are not URLs or data URIs. */
export function videoImages(fields: Record<string, unknown>): string[] | string {
  const { images, image } = fields;
  if (images !== undefined && images !== null) {
    if (!Array.isArray(images) || images.some((item) => typeof item !== 'string' || item === '')) {
      return 'images must be a list of image URLs or data URIs';
    }
    return images as string[];
  }
  if (image === undefined || image === null || image === '') return [];
  if (typeof image !== 'string') return 'image must be an image URL or data URI';
  return [image];
}

/** The vendor's own fields the client sent under `metadata` (new-api's way to reach them); an error when it is no object. */
export function videoMetadata(fields: Record<string, unknown>): Record<string, unknown> | string {
  const { metadata } = fields;
  if (metadata === undefined || metadata === null) return {};
  if (!isRecord(metadata)) return 'metadata must be an object';
  if (metadata.model !== undefined) return 'metadata cannot change the model';
  return metadata;
}

/** Whole seconds from `seconds` (the generic API's `duration`), the default when absent; an error past the range. */
export function wholeSeconds(value: unknown, fallback: number, max: number): number | string {
  if (value === undefined || value === null || value === '') return fallback;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > max) {
    return `duration must be a whole number of seconds from 1 to ${max}`;
  }
  return seconds;
}

/** The short side of a `WxH` (or DashScope's `W*H`) size, undefined when it is not one. */
export function shortSide(size: unknown): number | undefined {
  const match = typeof size === 'string' ? /^(\d+)[x*](\d+)$/.exec(size) : null;
  return match ? Math.min(Number(match[1]), Number(match[2])) : undefined;
}

/**
 * One of the vendor's resolution tiers (`720p`, `1080P`…, matched whatever the case, answered in the
 * vendor's) from a tier or a `WxH` frame by its short side; the fallback when none is given,
 * undefined when it is not one of them.
 */
export function resolutionTier(given: unknown, tiers: readonly string[], fallback: string): string | undefined {
  if (given === undefined || given === null || given === '') return fallback;
  const side = shortSide(given);
  const tier = (side !== undefined ? `${side}p` : String(given)).toLowerCase();
  return tiers.find((name) => name.toLowerCase() === tier);
}

/** The channel's base URL without a trailing slash, the type's default when the channel has none. */
export function channelBase(channel: Pick<ChannelSnapshot, 'baseUrl' | 'type'>): string {
  return (channel.baseUrl || channelType(channel.type)?.baseUrl || '').replace(/\/+$/, '');
}

export { isRecord };
