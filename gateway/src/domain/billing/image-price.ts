/**
 * The size/quality multiplier of a DALL·E per-call price (reference §5.3): the ModelPrice is the
 * price of a standard 1024×1024 image. Other image models are priced per call as configured.
 */
export function imagePriceMultiplier(model: string, size?: string, quality?: string): number {
  if (!model.startsWith('dall-e')) return 1;
  const wide = size === '1024x1792' || size === '1792x1024';
  const sizeRatio = size === '256x256' ? 0.4 : size === '512x512' ? 0.45 : wide ? 2 : 1;
  const qualityRatio = model === 'dall-e-3' && quality === 'hd' ? (wide ? 1.5 : 2) : 1;
  return sizeRatio * qualityRatio;
}
