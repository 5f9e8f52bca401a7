/** Whether `zone` is an IANA time zone name this runtime knows (e.g. `Asia/Shanghai`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  if (zone.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
