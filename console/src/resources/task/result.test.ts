import { describe, expect, it } from 'vitest';
import { taskResults } from './result.ts';

describe('task results', () => {
  it('finds the URLs of a Suno-like list of clips, images as thumbnails', () => {
    const data = [
      { id: 'c1', audio_url: 'https://cdn.example/c1.mp3', image_url: 'https://cdn.example/c1.jpeg', title: 'x' },
      { id: 'c2', audio_url: 'https://cdn.example/c2.mp3', metadata: { prompt: 'https://not-a-url-key' } },
    ];
    expect(taskResults(data)).toEqual([
      { key: 'audio_url', url: 'https://cdn.example/c1.mp3', image: false },
      { key: 'image_url', url: 'https://cdn.example/c1.jpeg', image: true },
      { key: 'audio_url', url: 'https://cdn.example/c2.mp3', image: false },
    ]);
  });

  it('finds a video URL list, each URL once, at most four', () => {
    const urls = ['a', 'b', 'c', 'd', 'e'].map((n) => `https://v.example/${n}.mp4`);
    const results = taskResults({ output: { video_urls: [urls[0], ...urls] } });
    expect(results.map((r) => r.url)).toEqual(urls.slice(0, 4));
    expect(results.every((r) => !r.image && r.key === 'video_urls')).toBe(true);
  });

  it('takes a picture file under a plain url key as an image, and ignores non-web schemes', () => {
    expect(taskResults({ url: 'http://img.example/p.webp?sig=1', result_url: 'data:image/png;base64,AA' })).toEqual([
      { key: 'url', url: 'http://img.example/p.webp?sig=1', image: true },
    ]);
  });

  it('finds nothing in empty or unreadable data', () => {
    expect(taskResults(null)).toEqual([]);
    expect(taskResults('https://x.example/a.png')).toEqual([]);
    expect(taskResults({})).toEqual([]);
  });
});
