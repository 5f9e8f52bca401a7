/** What a Midjourney submission is, as billing and routing see it (reference §9.1). */
export interface MjSubmission {
  /** The drawing action stored on the task (spec doc 3 §4). */
  action: string;
  /** The model it is routed and priced as: mj_<action>, swap_face. */
  model: string;
  /** The upstream id of the task it acts on (follow-ups: they go to that task's channel). */
  originalTaskId?: string;
}

/** A submission the gateway refuses before any upstream sees it; `description` is midjourney-proxy's wording. */
export class MjRequestError extends Error {
  readonly description: string;
  constructor(description: string) {
    super(description);
    this.description = description;
  }
}

const SIMPLE: Record<string, { action: string; model: string }> = {
  imagine: { action: 'IMAGINE', model: 'mj_imagine' },
  describe: { action: 'DESCRIBE', model: 'mj_describe' },
  blend: { action: 'BLEND', model: 'mj_blend' },
  shorten: { action: 'SHORTEN', model: 'mj_shorten' },
  edits: { action: 'EDITS', model: 'mj_edits' },
  video: { action: 'VIDEO', model: 'mj_video' },
  'upload-discord-images': { action: 'UPLOAD', model: 'mj_upload' },
  'insight-face/swap': { action: 'SWAP_FACE', model: 'swap_face' },
};

/** The submit paths after /mj/ (and the mode prefixes), as routes. */
export const SUBMIT_PATHS = [
  'submit/imagine',
  'submit/change',
  'submit/simple-change',
  'submit/describe',
  'submit/blend',
  'submit/edits',
  'submit/video',
  'submit/action',
  'submit/shorten',
  'submit/modal',
  'submit/upload-discord-images',
  'insight-face/swap',
] as const;

const CHANGE_ACTIONS = new Set(['UPSCALE', 'VARIATION', 'REROLL']);

const model = (action: string) => `mj_${action.toLowerCase()}`;

/** The action a button's customId stands for (midjourney-proxy's `MJ::JOB::upsample::1::<hash>` and kin). */
export function actionOfCustomId(customId: string): string {
  const id = customId.toLowerCase();
  if (id.includes('upsample')) return 'UPSCALE';
  if (id.includes('high_variation')) return 'HIGH_VARIATION';
  if (id.includes('low_variation')) return 'LOW_VARIATION';
  if (id.includes('variation')) return 'VARIATION';
  if (id.includes('reroll')) return 'REROLL';
  if (id.includes('customzoom')) return 'CUSTOM_ZOOM';
  if (id.includes('outpaint') || id.includes('zoom')) return 'ZOOM';
  if (id.includes('pan_')) return 'PAN';
  if (id.includes('inpaint')) return 'INPAINT';
  return 'UNKNOWN';
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** The submission a submit path and body describe; throws MjRequestError for a body it cannot be. */
export function describeSubmission(path: string, body: Record<string, unknown>): MjSubmission {
  const name = path.replace(/^submit\//, '');
  const simple = SIMPLE[name] ?? SIMPLE[path];
  if (simple) return simple;
  if (name === 'change') {
    const action = text(body.action).toUpperCase();
    if (!CHANGE_ACTIONS.has(action)) throw new MjRequestError('action_not_supported');
    if (!text(body.taskId)) throw new MjRequestError('task_id_is_required');
    return { action, model: model(action), originalTaskId: text(body.taskId) };
  }
  if (name === 'simple-change') {
    // "<taskId> U1" / "V2" / "R"
    const match = /^\s*(\S+)\s+([UVR])(\d?)\s*$/i.exec(text(body.content));
    if (!match) throw new MjRequestError('content_format_error');
    const letter = match[2]!.toUpperCase();
    const action = letter === 'U' ? 'UPSCALE' : letter === 'V' ? 'VARIATION' : 'REROLL';
    return { action, model: model(action), originalTaskId: match[1]! };
  }
  if (name === 'action') {
    if (!text(body.taskId)) throw new MjRequestError('task_id_is_required');
    if (!text(body.customId)) throw new MjRequestError('custom_id_is_required');
    const action = actionOfCustomId(text(body.customId));
    if (action === 'UNKNOWN') throw new MjRequestError('action_not_supported');
    return { action, model: model(action), originalTaskId: text(body.taskId) };
  }
  if (name === 'modal') {
    if (!text(body.taskId)) throw new MjRequestError('task_id_is_required');
    return { action: 'MODAL', model: 'mj_modal', originalTaskId: text(body.taskId) };
  }
  throw new MjRequestError('action_not_supported');
}

/** Strips the speed flags MjModeClearEnabled removes from prompts. */
export function clearMode(prompt: string): string {
  return prompt
    .replace(/\s*--(fast|relax|turbo)\b/g, '')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

/**
 * The body the upstream gets: the client's `notifyHook` never (the gateway polls and calls the hook itself),
 * its `accountFilter` only with MjAccountFilterEnabled, and the prompt's speed flags cleared with MjModeClearEnabled.
 */
export function upstreamBody(
  body: Record<string, unknown>,
  flags: { keepAccountFilter: boolean; clearMode: boolean },
): Record<string, unknown> {
  const { notifyHook: _hook, ...rest } = body;
  if (!flags.keepAccountFilter) delete rest.accountFilter;
  if (flags.clearMode && typeof rest.prompt === 'string') rest.prompt = clearMode(rest.prompt);
  return rest;
}
