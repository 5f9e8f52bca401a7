import type { MidjourneyRow } from '../../../store/repositories/task-billing.ts';

/** A stored JSON column, parsed; what does not parse is left out rather than failing the fetch. */
function json(value: string): unknown {
  if (!value) return null;
  try {
    return JSON.parse(value);
  } catch {
    return null;
  }
}

/**
 * A task as midjourney-proxy clients read it (its Task shape). With MjForwardUrlEnabled the image URL
 * points at this gateway's /mj/image/{id}, which proxies the upstream's image.
 */
export function mjTaskView(row: MidjourneyRow, forwardBase: string | undefined): Record<string, unknown> {
  const imageUrl = forwardBase && row.image_url ? `${forwardBase}/mj/image/${row.mj_id}` : row.image_url;
  return {
    id: row.mj_id,
    action: row.action,
    customId: '',
    botType: '',
    prompt: row.prompt,
    promptEn: row.prompt_en,
    description: row.description,
    state: row.state,
    submitTime: Number(row.submit_time),
    startTime: Number(row.start_time),
    finishTime: Number(row.finish_time),
    imageUrl,
    videoUrl: row.video_url,
    videoUrls: json(row.video_urls) ?? [],
    status: row.status,
    progress: row.progress,
    failReason: row.fail_reason,
    buttons: json(row.buttons) ?? [],
    maskBase64: '',
    properties: json(row.properties) ?? {},
  };
}
