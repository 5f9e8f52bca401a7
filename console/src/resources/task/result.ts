/** A result a task produced, found in its data: a link, shown as a thumbnail when it is an image. */
export interface TaskResult {
  /** The key it was found under (audio_url, video_url, image_url, url, …). */
  key: string;
  url: string;
  image: boolean;
}

const MAX_RESULTS = 4;
const MAX_DEPTH = 4;
const IMAGE_FILE = /\.(png|jpe?g|webp|gif)(\?|#|$)/i;

/**
 * The result URLs in a task's data, whatever its platform (Suno clips, video tasks, …): http(s) strings
 * under a key that names a URL, at most MAX_RESULTS, first found first, each once.
 */
export function taskResults(data: unknown): TaskResult[] {
  const found: TaskResult[] = [];
  const seen = new Set<string>();
  const visit = (value: unknown, key: string, depth: number) => {
    if (found.length >= MAX_RESULTS || depth > MAX_DEPTH) return;
    if (typeof value === 'string') {
      if (/url/i.test(key) && /^https?:\/\//i.test(value) && !seen.has(value)) {
        seen.add(value);
        found.push({ key, url: value, image: /image|cover|thumb/i.test(key) || IMAGE_FILE.test(value) });
      }
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item, key, depth + 1);
      return;
    }
    if (value && typeof value === 'object') {
      for (const [name, item] of Object.entries(value)) visit(item, name, depth + 1);
    }
  };
  visit(data, '', 0);
  return found;
}
