/** A Baidu v1 channel key: `APIKey|SecretKey`, the pair its OAuth token endpoint takes. */
export interface BaiduKey {
  apiKey: string;
  secretKey: string;
}

/** The key's two parts, or undefined when it is not `APIKey|SecretKey`. */
export function parseBaiduKey(key: string): BaiduKey | undefined {
  const parts = key.split('|').map((part) => part.trim());
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { apiKey: parts[0], secretKey: parts[1] };
}
