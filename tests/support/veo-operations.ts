import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Veo's long-running operations as the Gemini and Vertex mocks share them: a `predictLongRunning`
 * body checked as Google checks it (unknown fields refused, as protobuf JSON does), and operations
 * that advance one state per ask: running, then done with a video, or with an error when the next
 * submission was told to fail, or with every video filtered when told to filter.
 */
export interface VeoOperation {
  name: string;
  model: string;
  /** The submission as received. */
  body: any;
  polls: number;
  outcome: 'video' | { error: string } | 'filtered';
}

const PARAMETERS = new Set([
  'aspectRatio',
  'durationSeconds',
  'resolution',
  'negativePrompt',
  'personGeneration',
  'sampleCount',
  'seed',
  'generateAudio',
  'enhancePrompt',
  'compressionQuality',
  'storageUri',
]);

export class VeoOperations {
  readonly operations = new Map<string, VeoOperation>();
  /** The bytes of every finished video. */
  readonly content = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), randomBytes(64)]);
  /** The next submission fails with this message. */
  failNext: string | undefined;
  /** The next submission's video is filtered by the safety filters. */
  filterNext = false;

  /** Why Google would refuse a submission (400, or 404 for a model that makes no videos); undefined when it takes it. */
  check(
    model: string,
    body: any,
    { gcsImages }: { gcsImages: boolean },
  ): { status: number; message: string } | undefined {
    if (!model.startsWith('veo-')) {
      return { status: 404, message: `models/${model} is not found for predictLongRunning.` };
    }
    const instances = body?.instances;
    if (!Array.isArray(instances) || instances.length !== 1) {
      return { status: 400, message: '* instances: exactly one instance is required' };
    }
    const [instance] = instances;
    const unknownInstance = Object.keys(instance ?? {}).find((k) => !['prompt', 'image', 'lastFrame'].includes(k));
    if (unknownInstance)
      return { status: 400, message: `Invalid JSON payload received. Unknown name "${unknownInstance}"` };
    if (typeof instance.prompt !== 'string' || instance.prompt === '') {
      return { status: 400, message: '* instances[0].prompt: a prompt is required' };
    }
    if (instance.image !== undefined) {
      const image = instance.image;
      const inline = typeof image?.bytesBase64Encoded === 'string' && image.bytesBase64Encoded !== '';
      const stored = typeof image?.gcsUri === 'string' && image.gcsUri.startsWith('gs://');
      if (stored && !gcsImages) return { status: 400, message: 'gcsUri is not supported in the Gemini API.' };
      if ((!inline && !stored) || typeof image.mimeType !== 'string') {
        return {
          status: 400,
          message: '* instances[0].image: bytesBase64Encoded or gcsUri, and mimeType, are required',
        };
      }
    }
    const parameters = body.parameters ?? {};
    const unknown = Object.keys(parameters).find((k) => !PARAMETERS.has(k));
    if (unknown)
      return { status: 400, message: `Invalid JSON payload received. Unknown name "${unknown}" at 'parameters'` };
    if (parameters.durationSeconds !== undefined && typeof parameters.durationSeconds !== 'number') {
      return { status: 400, message: '* parameters.durationSeconds: must be a number' };
    }
    if (parameters.aspectRatio !== undefined && !['16:9', '9:16'].includes(parameters.aspectRatio)) {
      return { status: 400, message: `Aspect ratio ${parameters.aspectRatio} is not supported.` };
    }
    if (parameters.resolution !== undefined && !['720p', '1080p', '4k'].includes(parameters.resolution)) {
      return { status: 400, message: `Resolution ${parameters.resolution} is not supported.` };
    }
    return undefined;
  }

  /** A new operation under `prefix` (`models/{model}`, or Vertex's publisher model path). */
  create(prefix: string, model: string, body: any): VeoOperation {
    const outcome: VeoOperation['outcome'] = this.failNext
      ? { error: this.failNext }
      : this.filterNext
        ? 'filtered'
        : 'video';
    this.failNext = undefined;
    this.filterNext = false;
    const name = `${prefix}/operations/${randomUUID()}`;
    const operation: VeoOperation = { name, model, body, polls: 0, outcome };
    this.operations.set(name, operation);
    return operation;
  }

  /** Asks after an operation: undefined when there is none; running on the first ask, done after. */
  ask(name: string): (VeoOperation & { done: boolean }) | undefined {
    const operation = this.operations.get(name);
    if (!operation) return undefined;
    operation.polls++;
    return { ...operation, done: operation.polls > 1 };
  }
}
