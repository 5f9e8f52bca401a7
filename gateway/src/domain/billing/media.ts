/**
 * Token estimates for media in a prompt (reference §5.6). Remote media is never fetched (this runs
 * on every request); an inline (data: URL) image's size is read from its header.
 */

export const AUDIO_TOKENS = 256;
export const VIDEO_TOKENS = 8192;
export const FILE_TOKENS = 4096;
/** An image sent to a model that is not OpenAI's. */
export const NON_OPENAI_IMAGE_TOKENS = 520;
const GLM4_IMAGE_TOKENS = 1047;

export type MediaKind = 'image' | 'audio' | 'video' | 'file';

export interface ImageRef {
  /** An http(s) or data: URL. */
  url?: string;
  /** Inline image bytes in base64 (Claude and Gemini send them apart from the MIME type). */
  base64?: string;
  detail?: string;
}

/** OpenAI's own chat models, whose image cost OpenAI documents. */
export function isOpenAITextModel(model: string): boolean {
  return /^(gpt-|chatgpt-|o\d|computer-use)/.test(model.toLowerCase());
}

/** Tokens one image costs as a prompt part. */
export function imageTokens(model: string, image: ImageRef): number {
  const m = model.toLowerCase();
  if (m.startsWith('glm-4')) return GLM4_IMAGE_TOKENS;
  if (!isOpenAITextModel(m)) return NON_OPENAI_IMAGE_TOKENS;
  const size = inlineImageSize(image);
  const patch = PATCH_MULTIPLIERS.find(([prefix]) => m.startsWith(prefix));
  if (patch) {
    // Unknown size: the patch cap, the most a patch-based image can cost.
    return Math.round((size ? imagePatches(size.width, size.height) : MAX_PATCHES) * patch[1]);
  }
  const [base, tile] = tileCosts(m);
  if (image.detail === 'low') return base;
  // Unknown size: 3 × base, as new-api does when it does not fetch the image.
  if (!size) return 3 * base;
  return base + tile * imageTiles(size.width, size.height);
}

/** Base and per-tile tokens of tile-priced models (OpenAI's vision pricing). */
function tileCosts(m: string): [number, number] {
  if (m.startsWith('gpt-4o-mini')) return [2833, 5667];
  if (m.startsWith('gpt-5')) return [70, 140];
  if (/^o[13]/.test(m)) return [75, 150];
  if (m.startsWith('computer-use')) return [65, 129];
  return [85, 170];
}

/** Models priced by 32-pixel patches, with their token multipliers. */
const PATCH_MULTIPLIERS: ReadonlyArray<readonly [string, number]> = [
  ['gpt-4.1-mini', 1.62],
  ['gpt-4.1-nano', 2.46],
  ['gpt-5-mini', 1.62],
  ['gpt-5-nano', 2.46],
  ['o4-mini', 1.72],
];
const MAX_PATCHES = 1536;

/** 512-pixel tiles after fitting into 2048×2048 and scaling the short side down to 768. */
export function imageTiles(width: number, height: number): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shrink = Math.min(1, 768 / Math.min(w, h));
  w = Math.floor(w * shrink);
  h = Math.floor(h * shrink);
  return Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** 32-pixel patches, the image scaled down to fit 1536 of them when larger. */
export function imagePatches(width: number, height: number): number {
  const raw = Math.ceil(width / 32) * Math.ceil(height / 32);
  if (raw <= MAX_PATCHES) return raw;
  let r = Math.sqrt((32 * 32 * MAX_PATCHES) / (width * height));
  const w = (width * r) / 32;
  const h = (height * r) / 32;
  r *= Math.min(Math.floor(w) / w, Math.floor(h) / h);
  // The scaled sides are whole patches up to float noise; don't let 33.0000001 become 34.
  const patches = (side: number) => Math.ceil((side * r) / 32 - 1e-9);
  return Math.min(MAX_PATCHES, patches(width) * patches(height));
}

/** A media part's fixed cost by kind (images are priced by imageTokens). */
export function mediaTokens(kind: Exclude<MediaKind, 'image'>): number {
  return kind === 'audio' ? AUDIO_TOKENS : kind === 'video' ? VIDEO_TOKENS : FILE_TOKENS;
}

/** The kind of an inline or referenced file from its MIME type. */
export function mediaKindOf(mimeType: string | undefined): MediaKind {
  const type = (mimeType ?? '').toLowerCase();
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('audio/')) return 'audio';
  if (type.startsWith('video/')) return 'video';
  return 'file';
}

/** JPEG's size marker can follow large EXIF blocks; this much of the file is enough in practice. */
const HEADER_BYTES = 256 * 1024;

/** The pixel size of an inline image (base64 or a base64 data: URL), or undefined. */
export function inlineImageSize(image: ImageRef): { width: number; height: number } | undefined {
  let data = image.base64;
  let start = 0;
  if (data === undefined && image.url?.startsWith('data:')) {
    const comma = image.url.indexOf(',');
    if (comma < 0 || !image.url.slice(0, comma).endsWith(';base64')) return undefined;
    data = image.url;
    start = comma + 1;
  }
  if (data === undefined) return undefined;
  // Decode only the header, never a whole (possibly megabytes) image.
  const chars = Math.ceil(HEADER_BYTES / 3) * 4;
  return imageSize(Buffer.from(data.slice(start, start + chars), 'base64'));
}

/** The pixel size from an image file's header, or undefined for formats it does not know. */
export function imageSize(b: Uint8Array): { width: number; height: number } | undefined {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const ascii = (at: number, length: number) => String.fromCharCode(...b.subarray(at, at + length));
  if (b.length >= 24 && b[0] === 0x89 && ascii(1, 3) === 'PNG') {
    return sized(view.getUint32(16), view.getUint32(20));
  }
  if (b.length >= 10 && ascii(0, 3) === 'GIF') {
    return sized(view.getUint16(6, true), view.getUint16(8, true));
  }
  if (b.length >= 30 && ascii(0, 4) === 'RIFF' && ascii(8, 4) === 'WEBP') return webpSize(b, view, ascii(12, 4));
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpegSize(b, view);
  return undefined;
}

function webpSize(b: Uint8Array, view: DataView, chunk: string) {
  if (chunk === 'VP8X') {
    const u24 = (at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
    return sized(u24(24) + 1, u24(27) + 1);
  }
  if (chunk === 'VP8 ') return sized(view.getUint16(26, true) & 0x3fff, view.getUint16(28, true) & 0x3fff);
  if (chunk === 'VP8L') {
    const bits = view.getUint32(21, true);
    return sized((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1);
  }
  return undefined;
}

function jpegSize(b: Uint8Array, view: DataView) {
  let at = 2;
  while (at + 9 <= b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1]!;
    // Fill bytes and markers without a length.
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    // Start-of-frame markers (C0–CF except DHT C4, JPG C8, DAC CC) carry height, then width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return sized(view.getUint16(at + 7), view.getUint16(at + 5));
    }
    at += 2 + view.getUint16(at + 2);
  }
  return undefined;
}

function sized(width: number, height: number) {
  return width > 0 && height > 0 ? { width, height } : undefined;
}
