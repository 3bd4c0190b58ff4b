// Labels of the facet values that have no name of their own (a sector and a skill have theirs):
// work models, employment types, and countries by their English name (ISO 3166-1 alpha-2 through
// the runtime's ICU data), so a client can show a facet without a table of its own.

const ENUM_LABELS: Record<string, string> = {
  remote: "Remote",
  hybrid: "Hybrid",
  onsite: "On-site",
  full_time: "Full-time",
  part_time: "Part-time",
  contract: "Contract",
  temporary: "Temporary",
  internship: "Internship",
  freelance: "Freelance",
};

const regions = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });

/** The label of a work model, employment type or country code; null for another value. */
export function facetLabel(value: string): string | null {
  const label = ENUM_LABELS[value];
  if (label) return label;
  if (!/^[A-Z]{2}$/.test(value)) return null;
  return regions.of(value) ?? null;
}
