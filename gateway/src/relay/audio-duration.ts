/** Assumed bit rate of audio whose length cannot be read: 128 kbit/s, the common MP3 rate. */
const FALLBACK_BYTES_PER_SECOND = 16_000;

/**
 * The length of an uploaded audio file in seconds (transcriptions are billed by started minute,
 * reference §5.6). Read from the file's own headers; when the format is unknown or the file is
 * damaged, estimated from its size so that a request is never billed as free.
 */
export async function probeAudioSeconds(file: Blob): Promise<number> {
  if (file.size === 0) return 0;
  // Loaded with the first upload to transcribe, which most gateways never see.
  const { parseBuffer } = await import('music-metadata');
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const { format } = await parseBuffer(
      bytes,
      { mimeType: file.type || undefined, size: file.size },
      { duration: true },
    );
    if (format.duration !== undefined && Number.isFinite(format.duration) && format.duration > 0)
      return format.duration;
  } catch {
    // Not a format the parser knows: fall through to the size estimate.
  }
  return file.size / FALLBACK_BYTES_PER_SECOND;
}
