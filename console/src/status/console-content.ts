/** The fields of the status object (status.ts) read here; kept structural so that tests need no DOM types. */
type StatusFields = Readonly<Record<string, unknown>>;

/**
 * The dashboard's panels the administrator fills (options `console_setting.api_info`, `.announcements`,
 * `.faq`, each with an `*_enabled` flag), in new-api's shapes: what each entry holds, how it is checked
 * before it is saved, and what the status hands out for the dashboard.
 */

export type ContentKind = 'api_info' | 'announcements' | 'faq';
export const CONTENT_KINDS: readonly ContentKind[] = ['api_info', 'announcements', 'faq'];

/** One entry as stored: its fields as text, plus any other field the entry came with (kept as it was). */
export type ContentEntry = Record<string, unknown>;

/** The colours an API address may be tagged with, and how the console paints them. */
export const API_INFO_COLORS: Record<string, string> = {
  blue: '#3b82f6',
  green: '#10b981',
  cyan: '#06b6d4',
  purple: '#a855f7',
  pink: '#ec4899',
  red: '#ef4444',
  orange: '#f97316',
  amber: '#f59e0b',
  yellow: '#eab308',
  lime: '#84cc16',
  'light-green': '#4ade80',
  teal: '#14b8a6',
  'light-blue': '#38bdf8',
  indigo: '#6366f1',
  violet: '#8b5cf6',
  grey: '#8b9aa7',
  slate: '#64748b',
};

/** Announcement types and the colour of their marker. */
export const ANNOUNCEMENT_TYPES: Record<string, string> = {
  default: '#8b9aa7',
  ongoing: '#3b82f6',
  success: '#10b981',
  warning: '#f59e0b',
  error: '#ef4444',
};

export interface ContentField {
  name: string;
  /** text: one line; markdown: several lines shown as safe Markdown; choice: one of `choices`; date: ISO time. */
  kind: 'text' | 'markdown' | 'choice' | 'date';
  required: boolean;
  maxLength?: number;
  choices?: readonly string[];
  /** Must be an http(s) address. */
  url?: boolean;
}

export interface ContentSpec {
  /** At most this many entries. */
  max: number;
  fields: readonly ContentField[];
}

/** Limits as new-api enforces them, so that a list saved here is one new-api accepts too. */
export const CONTENT_SPECS: Record<ContentKind, ContentSpec> = {
  api_info: {
    max: 50,
    fields: [
      { name: 'url', kind: 'text', required: true, maxLength: 500, url: true },
      { name: 'route', kind: 'text', required: true, maxLength: 100 },
      { name: 'description', kind: 'text', required: true, maxLength: 200 },
      { name: 'color', kind: 'choice', required: true, choices: Object.keys(API_INFO_COLORS) },
    ],
  },
  announcements: {
    max: 100,
    fields: [
      { name: 'content', kind: 'markdown', required: true, maxLength: 500 },
      { name: 'publishDate', kind: 'date', required: true },
      { name: 'type', kind: 'choice', required: false, choices: Object.keys(ANNOUNCEMENT_TYPES) },
      { name: 'extra', kind: 'markdown', required: false, maxLength: 200 },
    ],
  },
  faq: {
    max: 100,
    fields: [
      { name: 'question', kind: 'text', required: true, maxLength: 200 },
      { name: 'answer', kind: 'markdown', required: true, maxLength: 1000 },
    ],
  },
};

export interface EntryProblem {
  /** The field at fault. */
  field: string;
  /** i18n key: modules.validation.* */
  message: string;
  values?: Record<string, unknown>;
}

const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;
/** An RFC 3339 date-time, as new-api requires for publishDate. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** The problems of one entry, field by field (none when it may be saved). */
export function checkEntry(kind: ContentKind, entry: ContentEntry): EntryProblem[] {
  const problems: EntryProblem[] = [];
  for (const field of CONTENT_SPECS[kind].fields) {
    const raw = entry[field.name];
    const value = typeof raw === 'string' ? raw : raw === undefined || raw === null ? '' : undefined;
    if (value === undefined) {
      problems.push({ field: field.name, message: 'modules.validation.text' });
    } else if (value.trim() === '') {
      if (field.required) problems.push({ field: field.name, message: 'modules.validation.required' });
    } else if (field.maxLength !== undefined && [...value].length > field.maxLength) {
      problems.push({ field: field.name, message: 'modules.validation.too_long', values: { max: field.maxLength } });
    } else if (field.url && !HTTP_URL.test(value.trim())) {
      problems.push({ field: field.name, message: 'modules.validation.url' });
    } else if (field.choices && !field.choices.includes(value)) {
      problems.push({ field: field.name, message: 'modules.validation.choice' });
    } else if (field.kind === 'date' && (!RFC3339.test(value) || Number.isNaN(Date.parse(value)))) {
      problems.push({ field: field.name, message: 'modules.validation.date' });
    }
  }
  return problems;
}

/** Problems of a whole list: by entry index, plus too many entries. */
export function checkList(
  kind: ContentKind,
  entries: readonly ContentEntry[],
): { tooMany: boolean; byEntry: Map<number, EntryProblem[]> } {
  const byEntry = new Map<number, EntryProblem[]>();
  entries.forEach((entry, index) => {
    const problems = checkEntry(kind, entry);
    if (problems.length > 0) byEntry.set(index, problems);
  });
  return { tooMany: entries.length > CONTENT_SPECS[kind].max, byEntry };
}

/** A stored list (JSON text or a value from the status) as entries; anything but a list of objects is []. */
export function readList(value: unknown): ContentEntry[] {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = value.trim() === '' ? [] : JSON.parse(value);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.filter((entry): entry is ContentEntry => typeof entry === 'object' && entry !== null);
}

/** A new, empty entry: the next id (new-api's front end keys entries by id) and today's date where one is due. */
export function blankEntry(kind: ContentKind, entries: readonly ContentEntry[], now = new Date()): ContentEntry {
  const ids = entries.map((entry) => (typeof entry.id === 'number' ? entry.id : 0));
  const entry: ContentEntry = { id: Math.max(0, ...ids) + 1 };
  for (const field of CONTENT_SPECS[kind].fields) {
    entry[field.name] =
      field.kind === 'date' ? now.toISOString().replace(/\.\d+Z$/, 'Z') : field.choices ? field.choices[0] : '';
  }
  return entry;
}

/** The status flag that turns each panel on (console_setting.<kind>_enabled). */
const PANEL_FLAGS: Record<ContentKind, string> = {
  api_info: 'api_info_enabled',
  announcements: 'announcements_enabled',
  faq: 'faq_enabled',
};

/** What the dashboard shows of one kind: the entries when the panel is on and has any, else undefined. */
export function panelEntries(status: StatusFields, kind: ContentKind): ContentEntry[] | undefined {
  if (status[PANEL_FLAGS[kind]] !== true) return undefined;
  const entries = readList(status[kind]).filter((entry) => checkEntry(kind, entry).length === 0);
  return entries.length > 0 ? entries : undefined;
}

/** Announcements newest first, at most `limit` of them. */
export function latestAnnouncements(entries: readonly ContentEntry[], limit = 20): ContentEntry[] {
  const time = (entry: ContentEntry) => Date.parse(String(entry.publishDate ?? '')) || 0;
  return [...entries].sort((a, b) => time(b) - time(a)).slice(0, limit);
}
