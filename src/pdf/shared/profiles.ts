// What each compression profile does.

export const COMPRESSION_PROFILES = ["lossless", "balanced", "extreme"] as const;
export type CompressionProfile = (typeof COMPRESSION_PROFILES)[number];

export interface ImageSettings {
  /** Resolution, in pixels per inch of the page, that images are downsampled to. */
  targetPpi: number;
  /**
   * An image is downsampled only when it is at least this many times finer than `targetPpi`
   * where the pages draw it largest (smaller gains are not worth a resampling).
   */
  downsampleThreshold: number;
  /**
   * The least structural similarity (SSIM) a page must keep with the original, both drawn at
   * 100 dpi, as far as its images' changes go (images covering part of a page may lose more: see
   * `minImageSsim`). An image that would fall below is tried at larger sizes (sharp text and line
   * art need more pixels than photographs), else left as it was.
   */
  minSsim: number;
  /** However little of its page an image covers, it keeps at least this similarity. */
  minImageSsim: number;
  /**
   * The finest, in pixels per inch of the page, an image may stay drawn at (the caller's
   * maxImagePpi): one above it is downsampled to it even when the quality floor would keep it
   * larger. Undefined: no cap.
   */
  maxPpi?: number;
  /** Longest side in pixels for images the pages were not seen to draw; larger ones are downsampled to it. */
  maxSide: number;
  /**
   * No image is downsampled to fewer pixels than this on its short side (one already smaller keeps
   * its own): at 72 ppi a CV's headshot drawn 50 points wide came to 50 x 50 pixels, a face no
   * longer recognisable, to save 1.2 KB. Undefined: no floor.
   */
  minShortSide?: number;
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
  /**
   * Graphics (images JPEG does not suit) are also tried as a palette of at most 256 colours, as
   * few as reach this quality (libimagequant's measure, 0-100); kept when smaller than their
   * lossless encoding and above the quality floor. Undefined: no palette.
   */
  paletteQuality?: number;
  /**
   * These settings are for images stored losslessly only (a JPEG source is not re-encoded at a
   * higher quality than the profile's: it would come out larger than a weaker attempt).
   */
  losslessSourcesOnly?: boolean;
  /**
   * Page images of scanned text are also tried as layers (images/layers.ts): a text mask at the
   * image's resolution over a background at these resolutions (ppi, tried in turn while the check
   * fails); with `bitonalFirst`, first as text on the paper's colour alone (bi-tonal).
   */
  layers?: { backgroundPpi: number[]; bitonalFirst: boolean };
  /**
   * A weaker profile's settings, tried on an image these leave as it was (no size passed the
   * quality floor, or none came out smaller): a stronger profile never keeps an image a weaker
   * one would have made smaller, so that its output is no larger for it.
   */
  fallback?: ImageSettings;
}

export interface ProfileSettings {
  /** undefined: images are left exactly as they are. */
  images?: ImageSettings;
  /** Drop other applications' private data (/PieceInfo) and page thumbnails (/Thumb). */
  discardPrivateData: boolean;
  /**
   * Drop XMP metadata (a PDF/A or PDF/UA catalog's excepted) and trim the document information
   * dictionary to Title, Author, Subject, Keywords and the dates. JavaScript and other active
   * content is removed in every profile, and identical objects are merged in every profile.
   */
  discardMetadata: boolean;
  /**
   * Rewrite page content streams in fewer bytes that draw the same (content/compact.ts): glyph-by-
   * glyph text moves merged into TJ arrays, colours and fonts set again to the same value dropped,
   * numbers in their shortest form. Pages render the same and read the same text; the streams no
   * longer decode to the same bytes, so not in `lossless`.
   */
  compactContent: boolean;
  /**
   * ICCBased colour spaces whose profile is sRGB written as DeviceRGB (content/srgb.ts), as readers
   * draw DeviceRGB: the same pixels, 2-3 KB less per profile. Not in `lossless` (the document's
   * colour management is what it was there).
   */
  srgbAsDeviceRgb: boolean;
  /**
   * Press (output-class) ICC profiles of colour spaces cut to the tables a reader draws with
   * (content/press-profiles.ts): the same pixels, 80 % of a SWOP profile's bytes less. Not in
   * `lossless` (the profiles stay as they were there).
   */
  cutPressProfiles: boolean;
  /** Colour images and the pages' colour operators converted to gray (the grayscale option). */
  grayscale?: boolean;
  /**
   * Remove all metadata (the removeMetadata option): the document information dictionary and
   * every XMP stream, PDF/A's and PDF/UA's too.
   */
  removeMetadata?: boolean;
  /** Write the output linearized (the linearize option, structure/linearize.ts). */
  linearize?: boolean;
}

const BALANCED_SETTINGS = {
  targetPpi: 150,
  downsampleThreshold: 1.5,
  minSsim: 0.96,
  minImageSsim: 0.92,
  maxSide: 2000,
  losslessToJpegRatio: 0.5,
  minJpegSaving: 0.1,
  paletteQuality: 90,
};

/**
 * A graphic stored losslessly whose JPEG at q75 falls below the floor at every size (fine text or
 * hard edges over a photograph-like area) would stay lossless, at many times the bytes of a JPEG
 * at a higher quality that holds the floor: it is tried again at q90 (also deciding afresh
 * whether it is a photograph, and with the palette).
 */
const BALANCED_RETRY: ImageSettings = { ...BALANCED_SETTINGS, jpegQuality: 90, losslessSourcesOnly: true };

const BALANCED_IMAGES: ImageSettings = {
  ...BALANCED_SETTINGS,
  jpegQuality: 75,
  fallback: BALANCED_RETRY,
  layers: { backgroundPpi: [75, 150], bitonalFirst: false },
};

export const PROFILE_SETTINGS: Record<CompressionProfile, ProfileSettings> = {
  // Everything decodes to exactly what it was and renders the same; nothing is dropped but
  // unreferenced objects, duplicates, active content and the glyphs no page draws of fonts
  // embedded whole (fonts/subset.ts: every profile).
  lossless: {
    discardPrivateData: false,
    discardMetadata: false,
    compactContent: false,
    srgbAsDeviceRgb: false,
    cutPressProfiles: false,
  },
  balanced: {
    images: BALANCED_IMAGES,
    discardPrivateData: true,
    discardMetadata: false,
    compactContent: true,
    srgbAsDeviceRgb: true,
    cutPressProfiles: true,
  },
  extreme: {
    images: {
      targetPpi: 72,
      downsampleThreshold: 1.1,
      minSsim: 0.915,
      minImageSsim: 0.85,
      maxSide: 1200,
      minShortSide: 96,
      jpegQuality: 40,
      losslessToJpegRatio: 0.7,
      minJpegSaving: 0.05,
      paletteQuality: 75,
      layers: { backgroundPpi: [50, 100], bitonalFirst: true },
      fallback: BALANCED_IMAGES,
    },
    discardPrivateData: true,
    discardMetadata: true,
    compactContent: true,
    srgbAsDeviceRgb: true,
    cutPressProfiles: true,
  },
};

export const isCompressionProfile = (value: unknown): value is CompressionProfile =>
  typeof value === "string" && (COMPRESSION_PROFILES as readonly string[]).includes(value);
