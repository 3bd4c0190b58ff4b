// What each compression profile does.

export const COMPRESSION_PROFILES = ["lossless", "balanced", "extreme"] as const;
export type CompressionProfile = (typeof COMPRESSION_PROFILES)[number];

export interface ImageSettings {
  /** Longest side in pixels; larger images are downsampled to it. */
  maxSide: number;
  /** mozjpeg quality of re-encoded images. */
  jpegQuality: number;
  /**
   * A lossless image becomes a JPEG only when the JPEG is at most this fraction of the lossless
   * encoding of the same pixels: photographs pass easily, line art and screenshots (where JPEG
   * smears edges and gains little) do not.
   */
  losslessToJpegRatio: number;
  /** A JPEG kept at its size is re-encoded only when that saves at least this fraction. */
  minJpegSaving: number;
}

export interface ProfileSettings {
  /** undefined: images are left exactly as they are. */
  images?: ImageSettings;
  /** Drop other applications' private data (/PieceInfo) and page thumbnails (/Thumb). */
  discardPrivateData: boolean;
}

export const PROFILE_SETTINGS: Record<CompressionProfile, ProfileSettings> = {
  // Everything decodes to exactly what it was; nothing is dropped but unreferenced objects.
  lossless: { discardPrivateData: false },
  balanced: {
    images: { maxSide: 2000, jpegQuality: 75, losslessToJpegRatio: 0.5, minJpegSaving: 0.1 },
    discardPrivateData: true,
  },
  extreme: {
    images: { maxSide: 1200, jpegQuality: 55, losslessToJpegRatio: 0.7, minJpegSaving: 0.05 },
    discardPrivateData: true,
  },
};

export const isCompressionProfile = (value: unknown): value is CompressionProfile =>
  typeof value === "string" && (COMPRESSION_PROFILES as readonly string[]).includes(value);
