/** The fields of the status object (status.ts) read here; kept structural so that tests need no DOM types. */
type StatusFields = Readonly<Record<string, unknown>>;

/**
 * Which top-bar and side-menu entries the administrator turned on: the options `HeaderNavModules` and
 * `SidebarModulesAdmin`, handed out by /api/status as JSON text ("" = the defaults), in new-api's shapes so
 * that either front end reads the same settings. A key that is missing keeps its default (shown).
 */

export const HEADER_ENTRIES = ['home', 'console', 'pricing', 'docs', 'about'] as const;
export type HeaderEntry = (typeof HEADER_ENTRIES)[number];

export interface HeaderNav {
  home: boolean;
  console: boolean;
  /** Pricing may ask visitors to sign in first. */
  pricing: { enabled: boolean; requireAuth: boolean };
  docs: boolean;
  about: boolean;
}

export const DEFAULT_HEADER_NAV: HeaderNav = {
  home: true,
  console: true,
  pricing: { enabled: true, requireAuth: false },
  docs: true,
  about: true,
};

/** The side menu's sections and entries as new-api names them (our menu.tsx maps its items onto these). */
export const SIDEBAR_SECTIONS = {
  chat: ['playground', 'chat'],
  console: ['detail', 'token', 'log', 'midjourney', 'task'],
  personal: ['topup', 'personal'],
  admin: ['channel', 'redemption', 'user', 'setting'],
} as const;
export type SidebarSection = keyof typeof SIDEBAR_SECTIONS;
export type SidebarModules = Record<string, Record<string, boolean>>;
/** One side-menu entry: its section and its name there. */
export type SidebarEntry = { [S in SidebarSection]: [S, (typeof SIDEBAR_SECTIONS)[S][number]] }[SidebarSection];

export const DEFAULT_SIDEBAR: SidebarModules = Object.fromEntries(
  Object.entries(SIDEBAR_SECTIONS).map(([section, entries]) => [
    section,
    Object.fromEntries([['enabled', true], ...entries.map((entry) => [entry, true])]),
  ]),
);

/** A JSON option's object, from the status's text (or an object, as a cached status may hold it); else {}. */
export function jsonObject(value: unknown): Record<string, unknown> {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = value.trim() === '' ? {} : JSON.parse(value);
    } catch {
      return {};
    }
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : {};
}

const flag = (value: unknown, fallback: boolean) => (typeof value === 'boolean' ? value : fallback);

/** The top-bar settings; pricing given as a plain boolean (new-api's older form) means "no sign-in needed". */
export function readHeaderNav(value: unknown): HeaderNav {
  const saved = jsonObject(value);
  const pricing = saved.pricing;
  const pricingObject = typeof pricing === 'object' && pricing !== null ? (pricing as Record<string, unknown>) : {};
  return {
    home: flag(saved.home, true),
    console: flag(saved.console, true),
    pricing: {
      enabled: typeof pricing === 'boolean' ? pricing : flag(pricingObject.enabled, true),
      requireAuth: flag(pricingObject.requireAuth, false),
    },
    docs: flag(saved.docs, true),
    about: flag(saved.about, true),
  };
}

/** The side-menu settings over the defaults: a section or entry the saved value leaves out stays on. */
export function readSidebar(value: unknown): SidebarModules {
  const saved = jsonObject(value);
  const merged: SidebarModules = {};
  for (const [section, defaults] of Object.entries(DEFAULT_SIDEBAR)) merged[section] = { ...defaults };
  for (const [section, entries] of Object.entries(saved)) {
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) continue;
    const into = merged[section] ?? {};
    for (const [entry, on] of Object.entries(entries)) if (typeof on === 'boolean') into[entry] = on;
    merged[section] = into;
  }
  return merged;
}

export const headerNavOf = (status: StatusFields) => readHeaderNav(status.HeaderNavModules);
export const sidebarOf = (status: StatusFields) => readSidebar(status.SidebarModulesAdmin);

/** Whether a side-menu entry shows: its section and the entry itself both on. */
export function sidebarEntryOn(sidebar: SidebarModules, [section, entry]: SidebarEntry): boolean {
  const settings = sidebar[section];
  return settings?.enabled !== false && settings?.[entry] !== false;
}

/**
 * Whether the side-menu settings leave a menu item on. System settings always stay for the super
 * administrator: the page that turns entries back on is never hidden from the one who can use it.
 */
export function menuEntryShown(
  context: { status: StatusFields; permissions: string | undefined },
  item: { to: string; entry?: SidebarEntry | undefined },
): boolean {
  if (!item.entry) return true;
  if (item.to === '/setting' && context.permissions === 'root') return true;
  return sidebarEntryOn(sidebarOf(context.status), item.entry);
}

/** The console pages behind side-menu entries, by the first segment of their path. */
const ENTRY_OF_PAGE: Record<string, SidebarEntry> = {
  playground: ['chat', 'playground'],
  chat: ['chat', 'chat'],
  detail: ['console', 'detail'],
  token: ['console', 'token'],
  log: ['console', 'log'],
  midjourney: ['console', 'midjourney'],
  task: ['console', 'task'],
  topup: ['personal', 'topup'],
  personal: ['personal', 'personal'],
};

/**
 * What a page at `pathname` is to this visitor. Turned-off entries are hidden from users; administrators keep
 * them (the administration pages are theirs anyway, and they must be able to look at what they turned off).
 * Pricing that needs a sign-in sends visitors to /login, as new-api's front end does.
 */
export function pageAccess(
  status: StatusFields,
  pathname: string,
  viewer: { signedIn: boolean; admin: boolean },
): 'open' | 'off' | 'sign-in' {
  const first = pathname.split('/')[1] ?? '';
  if (first === 'pricing') {
    const pricing = headerNavOf(status).pricing;
    if (!pricing.enabled && !viewer.admin) return 'off';
    return pricing.requireAuth && !viewer.signedIn ? 'sign-in' : 'open';
  }
  const entry = ENTRY_OF_PAGE[first];
  if (!entry || viewer.admin || !viewer.signedIn) return 'open';
  return sidebarEntryOn(sidebarOf(status), entry) ? 'open' : 'off';
}

/** The option text for these top-bar settings, keeping whatever else the stored value held (new-api's extras). */
export function headerNavValue(stored: unknown, nav: HeaderNav): string {
  const saved = jsonObject(stored);
  const pricing = typeof saved.pricing === 'object' && saved.pricing !== null ? saved.pricing : {};
  return JSON.stringify({ ...saved, ...nav, pricing: { ...pricing, ...nav.pricing } });
}
