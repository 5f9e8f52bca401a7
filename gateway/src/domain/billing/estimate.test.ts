import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import {
  estimateChatPromptTokens,
  estimateClaudePromptTokens,
  estimateCompletionTokens,
  estimateGeminiEmbedTokens,
  estimateGeminiPromptTokens,
  estimateInputTokens,
  estimatePromptTokens,
  estimateResponsesPromptTokens,
  requestedMaxTokens,
  transcriptionTokens,
} from './estimate.ts';
import { imagePatches, imageSize, imageTiles, imageTokens } from './media.ts';
import { countTextTokens, encodingFor } from './tokenizer.ts';

const plain = { disallowedSpecial: new Set<string>() };
/** The reference count: one tokenizer pass over the texts joined by newlines. */
const joined = (count: typeof o200k, ...texts: string[]) => count(texts.join('\n'), plain);

/** A PNG's signature and IHDR chunk: all imageSize reads. */
function png(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}
const pngDataUrl = (width: number, height: number) => `data:image/png;base64,${png(width, height).toString('base64')}`;

describe('tokenizer', () => {
  it('picks o200k for the GPT-4o generation and later, cl100k for older and other models', () => {
    for (const model of [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1-nano',
      'gpt-5',
      'o1',
      'o3-mini',
      'o4-mini',
      'chatgpt-4o-latest',
    ]) {
      expect(encodingFor(model), model).toBe('o200k_base');
    }
    for (const model of [
      'gpt-3.5-turbo',
      'gpt-4',
      'gpt-4-turbo',
      'text-embedding-3-small',
      'claude-sonnet-4',
      'gemini-2.5-pro',
    ]) {
      expect(encodingFor(model), model).toBe('cl100k_base');
    }
  });

  it('counts with the chosen encoding (the two disagree on Chinese)', () => {
    const text = '你好，世界。The quick brown fox.';
    expect(o200k(text)).not.toBe(cl100k(text));
    expect(countTextTokens('gpt-4o', text)).toBe(o200k(text));
    expect(countTextTokens('gpt-3.5-turbo', text)).toBe(cl100k(text));
    expect(countTextTokens('claude-sonnet-4', text)).toBe(cl100k(text));
    expect(countTextTokens('gpt-4o', '')).toBe(0);
  });

  it('counts special-token text as ordinary text instead of throwing', () => {
    const text = 'before <|endoftext|> after';
    expect(countTextTokens('gpt-4o', text)).toBe(o200k(text, plain));
    expect(countTextTokens('gpt-4o', text)).toBeGreaterThan(3);
  });
});

describe('estimateChatPromptTokens', () => {
  it('counts texts plus 3 per message, 3 per name, 8 per tool and 3 for the reply', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } } };
    const body = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', name: 'alice', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'Sunny, 21°C' },
      ],
      tools: [{ type: 'function', function: { name: 'weather', description: 'Current weather', parameters } }],
    };
    const texts = [
      'system',
      'You are terse.',
      'user',
      'alice',
      'Weather in Paris?',
      'assistant',
      'weather',
      '{"city":"Paris"}',
      'tool',
      'Sunny, 21°C',
      'weather',
      'Current weather',
      JSON.stringify(parameters),
    ];
    // 4 messages × 3 + 1 name × 3 + 1 tool × 8 + 3
    expect(estimateChatPromptTokens('gpt-4o', body)).toBe(joined(o200k, ...texts) + 12 + 3 + 8 + 3);
    expect(estimateChatPromptTokens('gpt-3.5-turbo', body)).toBe(joined(cl100k, ...texts) + 12 + 3 + 8 + 3);
  });

  it('adds image tokens: OpenAI tiles for an inline image, a flat 3 × base for a remote one', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: pngDataUrl(1024, 1024) } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/dog.png', detail: 'low' } },
          ],
        },
      ],
    };
    // 1024² → 768² → 4 tiles: 85 + 4 × 170 = 765; remote: 3 × 85 = 255; low detail: 85
    const images = 765 + 255 + 85;
    expect(estimateChatPromptTokens('gpt-4o', body)).toBe(joined(o200k, 'user', 'Compare') + 3 + 3 + images);
    // Not an OpenAI model: 520 per image.
    expect(estimateChatPromptTokens('qwen-vl', body)).toBe(joined(cl100k, 'user', 'Compare') + 3 + 3 + 3 * 520);
  });

  it('counts audio, video and file parts at their flat costs', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
            { type: 'video_url', video_url: { url: 'https://x/v.mp4' } },
            { type: 'file', file: { file_id: 'f1' } },
          ],
        },
      ],
    };
    expect(estimateChatPromptTokens('gpt-4o', body)).toBe(joined(o200k, 'user') + 3 + 3 + 256 + 8192 + 4096);
  });

  it('survives a malformed body', () => {
    expect(estimateChatPromptTokens('gpt-4o', null)).toBe(3);
    expect(estimateChatPromptTokens('gpt-4o', { messages: [42, { content: { weird: true } }] })).toBe(3 + 2 * 3);
  });
});

describe('image tokens', () => {
  it('reads the size of PNG, GIF, JPEG and WebP headers', () => {
    expect(imageSize(png(640, 480))).toEqual({ width: 640, height: 480 });
    const gif = Buffer.alloc(13);
    gif.write('GIF89a', 0, 'latin1');
    gif.writeUInt16LE(320, 6);
    gif.writeUInt16LE(200, 8);
    expect(imageSize(gif)).toEqual({ width: 320, height: 200 });
    // SOI, an APP0 segment to skip, then SOF0 (length, precision, height, width).
    const jpeg = Buffer.from([
      0xff, 0xd8, 0xff, 0xe0, 0x00, 0x06, 0x4a, 0x46, 0x49, 0x46, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x02, 0xd0, 0x05, 0x00,
      0x03,
    ]);
    expect(imageSize(jpeg)).toEqual({ width: 1280, height: 720 });
    const webp = Buffer.alloc(30);
    webp.write('RIFF', 0, 'latin1');
    webp.write('WEBPVP8X', 8, 'latin1');
    webp.writeUIntLE(1999, 24, 3);
    webp.writeUIntLE(999, 27, 3);
    expect(imageSize(webp)).toEqual({ width: 2000, height: 1000 });
    expect(imageSize(Buffer.from('not an image'))).toBeUndefined();
  });

  it("follows OpenAI's tile and patch examples", () => {
    // 1024² → 768²: 4 tiles; 2048×4096 → 1024×2048 → 768×1536: 6 tiles
    expect(imageTiles(1024, 1024)).toBe(4);
    expect(imageTiles(2048, 4096)).toBe(6);
    expect(imageTiles(300, 200)).toBe(1);
    // 1024²: 32 × 32 patches; 1800×2400 is scaled to 1056×1408: 33 × 44 = 1452
    expect(imagePatches(1024, 1024)).toBe(1024);
    expect(imagePatches(1800, 2400)).toBe(1452);
  });

  it('prices images per model family', () => {
    const square = { url: pngDataUrl(1024, 1024) };
    expect(imageTokens('gpt-4o', square)).toBe(85 + 4 * 170);
    expect(imageTokens('gpt-4o-mini', square)).toBe(2833 + 4 * 5667);
    expect(imageTokens('gpt-5', square)).toBe(70 + 4 * 140);
    expect(imageTokens('o3', square)).toBe(75 + 4 * 150);
    // Patch-based: 1024 patches × 1.62, rounded
    expect(imageTokens('gpt-4.1-mini', square)).toBe(Math.round(1024 * 1.62));
    expect(imageTokens('gpt-4.1-mini', { url: 'https://x/y.png' })).toBe(Math.round(1536 * 1.62));
    expect(imageTokens('claude-sonnet-4', square)).toBe(520);
    expect(imageTokens('glm-4v', square)).toBe(1047);
    // Inline bytes apart from their MIME type (Claude, Gemini).
    expect(imageTokens('gpt-4o', { base64: png(512, 512).toString('base64') })).toBe(85 + 170);
  });
});

describe('other request formats', () => {
  it('counts a completions prompt, strings one by one and token ids one each', () => {
    expect(estimateInputTokens('gpt-3.5-turbo-instruct', 'Say this is a test')).toBe(cl100k('Say this is a test'));
    expect(estimateInputTokens('gpt-3.5-turbo-instruct', ['one two', 'three'])).toBe(
      cl100k('one two') + cl100k('three'),
    );
    expect(estimateInputTokens('gpt-3.5-turbo-instruct', [1, 2, 3])).toBe(3);
    expect(estimateInputTokens('gpt-3.5-turbo-instruct', [[1, 2], [3]])).toBe(3);
    expect(estimatePromptTokens('openai-completions', 'gpt-3.5-turbo-instruct', { prompt: 'hello there' })).toBe(
      cl100k('hello there'),
    );
  });

  it('counts embeddings input', () => {
    const input = ['The food was delicious.', 'The waiter was friendly.'];
    expect(estimatePromptTokens('openai-embeddings', 'text-embedding-3-small', { input })).toBe(
      cl100k(input[0]!) + cl100k(input[1]!),
    );
    expect(estimatePromptTokens('openai-embeddings', 'text-embedding-3-small', { input: 'single' })).toBe(
      cl100k('single'),
    );
  });

  it('counts a Responses request: instructions, input items and function tools', () => {
    const parameters = { type: 'object' };
    const body = {
      instructions: 'Be brief.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Hi' },
            { type: 'input_image', image_url: 'https://x/i.png' },
          ],
        },
        { type: 'function_call', name: 'lookup', arguments: '{"q":1}', call_id: 'c' },
        { type: 'function_call_output', call_id: 'c', output: 'found' },
      ],
      tools: [{ type: 'function', name: 'lookup', description: 'Find', parameters }, { type: 'web_search' }],
    };
    const texts = [
      'Be brief.',
      'user',
      'Hi',
      'lookup',
      '{"q":1}',
      'found',
      'lookup',
      'Find',
      JSON.stringify(parameters),
    ];
    // One remote image for gpt-4o: 3 × 85.
    expect(estimateResponsesPromptTokens('gpt-4o', body)).toBe(joined(o200k, ...texts) + 255);
    expect(estimatePromptTokens('openai-responses', 'gpt-4o', { input: 'just text' })).toBe(o200k('just text'));
    // A compaction request has a Responses input.
    expect(estimatePromptTokens('openai-responses-compact', 'gpt-4o', body)).toBe(joined(o200k, ...texts) + 255);
  });

  it('counts a Claude request: system, messages, tool use and results, tools, images at 520', () => {
    const schema = { type: 'object', properties: {} };
    const body = {
      system: [{ type: 'text', text: 'You are Claude.' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: png(10, 10).toString('base64') },
            },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'look', input: { deep: true } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'a cat' }] },
      ],
      tools: [{ name: 'look', description: 'Look closer', input_schema: schema }],
    };
    const texts = [
      'You are Claude.',
      'user',
      'What is this?',
      'assistant',
      'look',
      '{"deep":true}',
      'user',
      'a cat',
      'look',
      'Look closer',
      JSON.stringify(schema),
    ];
    expect(estimateClaudePromptTokens('claude-sonnet-4', body)).toBe(joined(cl100k, ...texts) + 520);
    expect(estimatePromptTokens('claude-messages', 'claude-sonnet-4', { system: 'Hi', messages: [] })).toBe(
      cl100k('Hi'),
    );
  });

  it('counts a Gemini request: system instruction, parts, inline media, function declarations', () => {
    const parameters = { type: 'OBJECT' };
    const body = {
      systemInstruction: { parts: [{ text: 'Answer in French.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Describe' },
            { inlineData: { mimeType: 'image/jpeg', data: 'AAAA' } },
            { inline_data: { mime_type: 'audio/wav', data: 'AAAA' } },
            { fileData: { mimeType: 'video/mp4', fileUri: 'gs://b/v.mp4' } },
          ],
        },
        { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'f', description: 'F', parameters }] }],
    };
    const texts = ['Answer in French.', 'Describe', 'f', '{"a":1}', 'f', 'F', JSON.stringify(parameters)];
    expect(estimateGeminiPromptTokens('gemini-2.5-pro', body)).toBe(joined(cl100k, ...texts) + 520 + 256 + 8192);
    expect(estimateGeminiEmbedTokens('text-embedding-004', { content: { parts: [{ text: 'embed me' }] } })).toBe(
      cl100k('embed me'),
    );
  });

  it('dispatches by wire format', () => {
    const chat = { messages: [{ role: 'user', content: 'hello' }] };
    expect(estimatePromptTokens('openai-chat', 'gpt-4o', chat)).toBe(estimateChatPromptTokens('gpt-4o', chat));
    expect(estimatePromptTokens('openai-images', 'dall-e-3', { prompt: 'a red fox' })).toBe(cl100k('a red fox'));
    expect(estimatePromptTokens('rerank', 'bge-reranker', { query: 'q', documents: ['d1', { text: 'd2' }] })).toBe(
      cl100k('q') + cl100k('d1') + cl100k('d2'),
    );
    expect(estimatePromptTokens('openai-audio-transcriptions', 'whisper-1', {})).toBe(0);
  });
});

describe('requestedMaxTokens', () => {
  it("reads each format's completion budget", () => {
    expect(requestedMaxTokens('openai-chat', { max_tokens: 100, max_completion_tokens: 300 })).toBe(300);
    expect(requestedMaxTokens('openai-chat', { max_tokens: 100 })).toBe(100);
    expect(requestedMaxTokens('openai-chat', {})).toBe(0);
    expect(requestedMaxTokens('openai-completions', { max_tokens: 16 })).toBe(16);
    expect(requestedMaxTokens('openai-responses', { max_output_tokens: 2048, max_tokens: 1 })).toBe(2048);
    expect(requestedMaxTokens('claude-messages', { max_tokens: 1024 })).toBe(1024);
    expect(requestedMaxTokens('gemini-generate', { generationConfig: { maxOutputTokens: 512 } })).toBe(512);
    expect(requestedMaxTokens('gemini-generate', { generation_config: { max_output_tokens: 64 } })).toBe(64);
    expect(requestedMaxTokens('openai-chat', { max_tokens: -5 })).toBe(0);
    expect(requestedMaxTokens('openai-embeddings', { max_tokens: 100 })).toBe(0);
  });
});

describe('completion estimates', () => {
  it('counts streamed text plus 7 per tool call', () => {
    const text = 'Here is the answer: 42.';
    expect(estimateCompletionTokens('gpt-4o', text)).toBe(o200k(text));
    expect(estimateCompletionTokens('gpt-4o', text, 2)).toBe(o200k(text) + 14);
  });

  it('bills transcription at 1,000 tokens per started minute', () => {
    expect(transcriptionTokens(1)).toBe(1000);
    expect(transcriptionTokens(60)).toBe(1000);
    expect(transcriptionTokens(61)).toBe(2000);
    expect(transcriptionTokens(0)).toBe(0);
  });
});
