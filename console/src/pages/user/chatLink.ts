/** Pure helpers of the chat links (no browser globals, so unit tests can import them). */

/** A token as the chat pages need it (spec doc 3 §3 "Token record"). */
export interface KeyedToken {
  id: number;
  name: string;
  key: string;
  status: number;
}

/** Token status 1: enabled (spec doc 2 §4); only enabled tokens supply keys. */
export const TOKEN_ENABLED = 1;

/** The key with exactly one `sk-` in front (the server answers keys without it, as new-api does). */
export function skKey(key: string): string {
  return key.startsWith('sk-') ? key : `sk-${key}`;
}

/**
 * A chat client URL from a saved link template (spec doc 3 §2 "Chat frame page"): `{address}` becomes the
 * encoded server address and `{key}` the key with its `sk-` prefix.
 */
export function chatUrl(template: string, key: string, address: string): string {
  return template.replaceAll('{address}', encodeURIComponent(address)).replaceAll('{key}', skKey(key));
}

/** The chat-to-link URL (spec doc 3 §2 "Chat-to-link page"): the chat client with key and address in settings. */
export function chatLinkUrl(chatLink: string, key: string, address: string): string {
  const settings = JSON.stringify({ key: skKey(key), url: address });
  return `${chatLink.replace(/\/+$/, '')}/#/?settings=${encodeURIComponent(settings)}`;
}

/** A chat client the token list offers: its name, and how it is opened with a key on this server. */
export interface ChatClient {
  name: string;
  url(key: string, address: string): string;
}

/**
 * Every chat client the token list offers: the two fixed ones new-api's token list has always offered when
 * their links are set (`ChatLink` opens ChatGPT Next Web, `ChatLink2` ChatGPT Web with Midjourney, both with
 * the key and address in their settings), then the saved `Chats` templates. Undefined when `Chats` holds a
 * value of the wrong shape.
 */
export function chatClients(
  links: { chat_link?: string; chat_link2?: string },
  saved: Array<{ name: string; link: string }> | undefined,
): ChatClient[] | undefined {
  if (saved === undefined) return undefined;
  const fixed: ChatClient[] = [];
  const add = (name: string, base: string | undefined) => {
    if (base) fixed.push({ name, url: (key, address) => chatLinkUrl(base, key, address) });
  };
  add('ChatGPT Next Web', links.chat_link);
  add('ChatGPT Web & Midjourney', links.chat_link2);
  return [
    ...fixed,
    ...saved.map(({ name, link }) => ({ name, url: (key: string, address: string) => chatUrl(link, key, address) })),
  ];
}
