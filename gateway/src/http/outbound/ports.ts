/** One allowed_ports entry: "443" or "8000-9000" (inclusive), ports 1 to 65535; undefined when malformed. */
export function parsePortRange(entry: string): readonly [number, number] | undefined {
  const match = /^\s*(\d{1,5})(?:\s*-\s*(\d{1,5}))?\s*$/.exec(entry);
  if (!match) return undefined;
  const low = Number(match[1]);
  const high = match[2] === undefined ? low : Number(match[2]);
  return low >= 1 && high <= 65535 && low <= high ? [low, high] : undefined;
}
