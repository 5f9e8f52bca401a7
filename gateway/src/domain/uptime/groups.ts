import type { OptionsService } from '../options/index.ts';

/** One configured Uptime Kuma status page (console_setting.uptime_kuma_groups, new-api's shape). */
export interface UptimeGroup {
  /** The Uptime Kuma server, e.g. https://status.example.com. */
  url: string;
  /** The status page's slug. */
  slug: string;
  /** The heading the dashboard shows above the page's monitors. */
  categoryName: string;
}

/**
 * The pages to show: none while console_setting.uptime_kuma_enabled is off (then nothing is fetched
 * either), else the configured ones that name both a server and a slug; others cannot be fetched.
 */
export function uptimeGroups(options: Pick<OptionsService, 'getJson' | 'getBoolean'>): UptimeGroup[] {
  if (!options.getBoolean('console_setting.uptime_kuma_enabled')) return [];
  const groups = options.getJson<UptimeGroup[]>('console_setting.uptime_kuma_groups');
  return groups.filter((g) => g.url.trim() !== '' && g.slug.trim() !== '');
}
