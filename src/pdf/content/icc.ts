// An ICC profile's tag table (ICC.1:2004 7.3): where each tag's data is. Read by srgb.ts (is a
// profile sRGB?) and press-profiles.ts (a press profile cut to the tags a reader draws with).

export interface IccTag {
  signature: string;
  offset: number;
  size: number;
}

/** The four-character signature at `at` (a tag's, or the header's class and file signature). */
export const signatureAt = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));

/** The profile's tags in table order; undefined for a damaged table (a tag beyond the end, 100+ tags). */
export function iccTags(profile: Uint8Array): IccTag[] | undefined {
  if (profile.length < 132) return undefined;
  const view = new DataView(profile.buffer, profile.byteOffset, profile.byteLength);
  const count = view.getUint32(128);
  if (count > 100 || 132 + count * 12 > profile.length) return undefined;
  const tags: IccTag[] = [];
  for (let i = 0; i < count; i++) {
    const at = 132 + i * 12;
    const tag = { signature: signatureAt(profile, at), offset: view.getUint32(at + 4), size: view.getUint32(at + 8) };
    if (tag.offset + tag.size > profile.length) return undefined;
    tags.push(tag);
  }
  return tags;
}
