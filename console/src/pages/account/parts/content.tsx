import { Box } from '@mui/material';

/**
 * How an administrator's text (About, HomePageContent) is shown: a URL becomes a full-page frame, text
 * that starts with a tag is HTML, anything else is Markdown-ish text.
 */
export type ContentKind = 'empty' | 'url' | 'html' | 'markdown';

export function contentKind(text: string | undefined): ContentKind {
  const trimmed = (text ?? '').trim();
  if (!trimmed) return 'empty';
  if (/^https?:\/\/\S+$/i.test(trimmed)) return 'url';
  if (trimmed.startsWith('<')) return 'html';
  return 'markdown';
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Links only to web addresses, mail and the site's own paths. */
const safeHref = (href: string) => (/^(https?:|mailto:|\/|#)/i.test(href) ? href : '#');

/** Inline Markdown on escaped text: code, images, links, bold, italics. */
function inline(text: string): string {
  const codes: string[] = [];
  let html = escapeHtml(text).replace(/`([^`]+)`/g, (_, code: string) => {
    codes.push(`<code>${code}</code>`);
    return `\uE000${codes.length - 1}\uE000`;
  });
  html = html
    .replace(
      /!\[([^\]]*)\]\(([^)\s]+)\)/g,
      (_, alt: string, src: string) => `<img alt="${alt}" src="${safeHref(src)}">`,
    )
    .replace(
      /\[([^\]]+)\]\(([^)\s]+)\)/g,
      (_, label: string, href: string) => `<a href="${safeHref(href)}" target="_blank" rel="noreferrer">${label}</a>`,
    )
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>');
  return html.replace(/\uE000(\d+)\uE000/g, (_, index: string) => codes[Number(index)] ?? '');
}

/**
 * A small Markdown subset, enough for an about or home text: headings, paragraphs, lists, quotes, fenced
 * code, rules, and inline code, links, images, bold and italics. Everything else is shown as text.
 */
export function markdownToHtml(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let paragraph: string[] = [];
  let list: { tag: 'ul' | 'ol'; items: string[] } | undefined;
  const flush = () => {
    if (paragraph.length > 0) out.push(`<p>${paragraph.map(inline).join('<br>')}</p>`);
    paragraph = [];
    if (list) out.push(`<${list.tag}>${list.items.map((item) => `<li>${inline(item)}</li>`).join('')}</${list.tag}>`);
    list = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = line.match(/^```/);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !/^```/.test(lines[i] ?? ''); i++) code.push(lines[i] ?? '');
      out.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    const bullet = line.match(/^\s*[-*+]\s+(.*)$/);
    const numbered = line.match(/^\s*\d+[.)]\s+(.*)$/);
    if (heading) {
      flush();
      const level = heading[1]!.length;
      out.push(`<h${level}>${inline(heading[2] ?? '')}</h${level}>`);
    } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      out.push('<hr>');
    } else if (bullet || numbered) {
      const tag = bullet ? 'ul' : 'ol';
      if (paragraph.length > 0 || (list && list.tag !== tag)) flush();
      list ??= { tag, items: [] };
      list.items.push((bullet ?? numbered)![1] ?? '');
    } else if (line.startsWith('>')) {
      flush();
      out.push(`<blockquote>${inline(line.replace(/^>\s?/, ''))}</blockquote>`);
    } else if (line.trim() === '') {
      flush();
    } else {
      if (list) flush();
      paragraph.push(line);
    }
  }
  flush();
  return out.join('\n');
}

/** The administrator's content as its kind says (never 'empty': the caller shows its default then). */
export function SiteContent({ text, testId }: { text: string; testId: string }) {
  const kind = contentKind(text);
  if (kind === 'url') {
    return (
      <Box
        component="iframe"
        src={text.trim()}
        title={testId}
        data-testid={testId}
        sx={{ width: '100%', flex: 1, minHeight: 'calc(100vh - 140px)', border: 0 }}
      />
    );
  }
  const html = kind === 'html' ? text : markdownToHtml(text);
  return (
    <Box
      data-testid={testId}
      sx={{
        lineHeight: 1.7,
        '& img': { maxWidth: '100%' },
        '& pre': { overflow: 'auto' },
        '& a': { color: 'primary.main' },
      }}
      // biome-ignore lint/security/noDangerouslySetInnerHtml: the administrator's own content (options About, HomePageContent); Markdown is escaped first
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
