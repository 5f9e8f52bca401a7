/**
 * Bounds of the multipart bodies of uploads (image edits, audio transcriptions and translations): the
 * body size is capped by the route's body limit; these cap what parsing it makes of those bytes. The
 * parts are counted on the raw bytes, before any is parsed.
 */
import { AppError } from '../../errors.ts';
import { BOUND_ERRORS } from './errors.ts';

/** Fields and files in one form (an image edit with 16 images and every option has about 30). */
export const MAX_FORM_PARTS = 64;
/** Files in one form (OpenAI takes up to 16 images in an edit). */
export const MAX_FORM_FILES = 16;
/** Characters of one text field (OpenAI's longest, an image prompt, is 32,000). */
export const MAX_FORM_FIELD_LENGTH = 65_536;

/** Throws `multipart_too_many_parts` when `body` holds more than MAX_FORM_PARTS parts. */
export function assertFormPartCount(body: Buffer, contentType: string): void {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const delimiter = boundary ? Buffer.from(`--${boundary[1] ?? boundary[2]}`) : undefined;
  if (!delimiter) return;
  // Each part starts with the delimiter, and the last one is followed by the closing delimiter too.
  let delimiters = 0;
  for (let at = body.indexOf(delimiter); at >= 0; at = body.indexOf(delimiter, at + delimiter.length)) {
    if (++delimiters > MAX_FORM_PARTS + 1) {
      throw new AppError(BOUND_ERRORS.multipart_too_many_parts, { limit: MAX_FORM_PARTS });
    }
  }
}

/** Throws when the parsed form has more files than MAX_FORM_FILES or a text field longer than MAX_FORM_FIELD_LENGTH. */
export function assertFormFields(form: FormData): void {
  let files = 0;
  for (const [name, value] of form) {
    if (typeof value !== 'string') {
      if (++files > MAX_FORM_FILES)
        throw new AppError(BOUND_ERRORS.multipart_too_many_files, { limit: MAX_FORM_FILES });
    } else if (value.length > MAX_FORM_FIELD_LENGTH) {
      throw new AppError(BOUND_ERRORS.multipart_field_too_large, {
        field: name.slice(0, 64),
        limit: MAX_FORM_FIELD_LENGTH,
      });
    }
  }
}
