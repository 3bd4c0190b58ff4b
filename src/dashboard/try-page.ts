// Try it: a PDF compressed through the API's own service from a plain multipart form (it works
// without JavaScript). The form sends its key, profile and options before the file, so they are
// known, and kept for the page that answers, even when the file is refused. dashboard.js, when it
// runs, sends the same form with XMLHttpRequest to show the upload's progress, with a way to cancel
// it, and puts the page that answers in place of this one's main content.
import type { KeyView } from "../auth/accounts.ts";
import type { CompressionResultBody } from "../compress/compression.ts";
import type { JobResource } from "../compress/async-jobs/resource.ts";
import { COMPRESSION_PROFILES } from "../pdf/index.ts";
import { html, type Html } from "./html.ts";
import { bytes, count, csrfField, DASHBOARD, layout, notice, planNeeded, type Viewer } from "./pages.ts";
import { reportCard } from "./report-card.ts";

const PROFILE_TEXT: Record<string, string> = {
  balanced: "Images at 150 ppi, photos as JPEG q75, checked against the page: the default.",
  lossless: "Every page renders pixel-identical; smaller where structure and streams allow.",
  extreme: "Images at 72 ppi, JPEG q40: the smallest files, for reading on screen.",
};

/** The form's fields as sent (the API's names): what the form shows again, and the result names. */
export type TryFields = Readonly<Partial<Record<string, string>>>;

export interface TryPageOptions {
  keys: KeyView[];
  /** The fields of the form just sent, to show it as it was; none for a fresh form. */
  fields?: TryFields;
  result?: CompressionResultBody & { filename: string };
  /** A scan with more pages to read (ocr) than a synchronous call reads: queued as a job. */
  queued?: JobResource & { filename: string };
  error?: { status: number; code: string; message: string };
}

export function tryPage(viewer: Viewer, options: TryPageOptions): string {
  // Newest first, as on the keys page.
  const active = options.keys.filter((key) => !key.revokedAt).reverse();
  const fields = options.fields ?? {};
  const result = options.result ? compressedNotice(options.result, fields) : "";
  const error = options.error ? notCompressedNotice(options.error) : "";
  const queued = options.queued ? queuedNotice(options.queued) : "";
  return layout(
    "Try it",
    html`<h1>Try it</h1>
      <p>Compress a PDF through the API from here.</p>
      <div data-try-answer>${result}${queued}${error}</div>
      ${tryContent(viewer, active, fields)}`,
    viewer,
    "try",
  );
}

/** The form, or why there is none: a plan without the API, or no active key to call it with. */
function tryContent(viewer: Viewer, active: KeyView[], fields: TryFields): Html {
  if (viewer.session.plan !== "corporate") return planNeeded(viewer.session.plan);
  if (active.length === 0) {
    return notice(
      "info",
      html`<p>You have no active key. <a href="${DASHBOARD}/keys">Create a key</a> first, then try it here.</p>`,
    );
  }
  return tryForm(viewer, active, fields);
}

function tryForm(viewer: Viewer, active: KeyView[], fields: TryFields): Html {
  const profile = fields["profile"] ?? "balanced";
  return html`<form method="post" action="${DASHBOARD}/try" enctype="multipart/form-data" class="card stack" data-try>
    ${csrfField(viewer)}
    <label for="key">API key</label>
    <select id="key" name="key_id" required>
      ${active.map(
        (key) =>
          html`<option value="${key.id}" ${key.id === fields["key_id"] ? "selected" : ""}>
            ${key.name} (${key.prefix}…)
          </option>`,
      )}
    </select>
    <fieldset>
      <legend>Profile</legend>
      ${COMPRESSION_PROFILES.map((name) => profileChoice(name, name === profile))}
    </fieldset>
    ${optionsFieldset(fields)}
    <label for="file">PDF file</label>
    <input id="file" name="file" type="file" accept="application/pdf,.pdf" required />
    <button type="submit">Compress</button>
    ${uploadProgress()}
    <p class="hint">
      Runs <code>POST /v1/compress</code> with the chosen key: it counts against your monthly quota and the key's rate
      limit like any call.
    </p>
  </form>`;
}

/** The output options (docs/compression-api.md, "Options"), each empty or unticked unless chosen. */
function optionsFieldset(fields: TryFields): Html {
  return html`<fieldset>
    <legend>Options</legend>
    <div class="option-numbers">
      ${numberField({
        name: "target_size",
        label: "Target size (bytes)",
        value: fields["target_size"] ?? "",
        min: 1024,
        hint: "At most this large, with the least loss, e.g. 2000000 for under 2 MB. Balanced and extreme.",
      })}
      ${numberField({
        name: "max_image_ppi",
        label: "Largest image resolution (ppi)",
        value: fields["max_image_ppi"] ?? "",
        min: 36,
        max: 2400,
        hint: "No image stays finer than this, 36 to 2400. Balanced and extreme.",
      })}
    </div>
    ${choice({
      type: "checkbox",
      id: "grayscale",
      name: "grayscale",
      value: "true",
      checked: fields["grayscale"] === "true",
      label: "Grayscale",
      hint: "Colour images and the pages' colours become grey. Balanced and extreme.",
    })}
    ${choice({
      type: "checkbox",
      id: "remove_metadata",
      name: "remove_metadata",
      value: "true",
      checked: fields["remove_metadata"] === "true",
      label: "Remove metadata",
      hint: "Title, Author, Creator, Producer, XMP, thumbnails and private application data go.",
    })}
    ${choice({
      type: "checkbox",
      id: "linearize",
      name: "linearize",
      value: "true",
      checked: fields["linearize"] === "true",
      label: "Fast web view",
      hint: "Linearized: a browser shows the first page before the rest of the file has arrived.",
    })}
    ${choice({
      type: "checkbox",
      id: "ocr",
      name: "ocr",
      value: "true",
      checked: fields["ocr"] === "true",
      label: "Make scans searchable (OCR)",
      hint: "Scanned pages get an invisible text layer: their words can be searched and copied. Slow: seconds a page.",
    })}
    <div class="field">
      <label for="ocr_languages">OCR languages</label>
      <select id="ocr_languages" name="ocr_languages" aria-describedby="ocr_languages-text">
        ${OCR_LANGUAGE_CHOICES.map(
          ([value, label]) =>
            html`<option value="${value}" ${(fields["ocr_languages"] ?? "") === value ? "selected" : ""}>
              ${label}
            </option>`,
        )}
      </select>
      <span id="ocr_languages-text" class="hint">The language the scans are written in. With OCR only.</span>
    </div>
    ${choice({
      type: "checkbox",
      id: "signatures",
      name: "signatures",
      value: "remove",
      checked: fields["signatures"] === "remove",
      label: "Remove digital signatures",
      hint: "A signed PDF is refused unless this is ticked: compressing breaks its signatures, so they are removed.",
    })}
  </fieldset>`;
}

/** The OCR languages offered (the API takes up to three joined by +; the page offers one, or English with one). */
const OCR_LANGUAGE_CHOICES: [string, string][] = [
  ["", "English"],
  ["deu", "German"],
  ["fra", "French"],
  ["spa", "Spanish"],
  ["por", "Portuguese"],
  ["ita", "Italian"],
  ["eng+deu", "English and German"],
  ["eng+fra", "English and French"],
];

function numberField(input: {
  name: string;
  label: string;
  value: string;
  min: number;
  max?: number;
  hint: string;
}): Html {
  return html`<div class="field">
    <label for="${input.name}">${input.label}</label>
    <input
      id="${input.name}"
      name="${input.name}"
      type="number"
      inputmode="numeric"
      step="1"
      min="${input.min}"
      ${input.max ? html`max="${input.max}"` : ""}
      value="${input.value}"
      aria-describedby="${input.name}-text"
    />
    <span id="${input.name}-text" class="hint">${input.hint}</span>
  </div>`;
}

/**
 * Shown by dashboard.js while it sends the form: how much of the file has gone, then that it is being
 * compressed, and a button that cancels it (nothing is charged: the unit is reserved once the file is in).
 */
function uploadProgress(): Html {
  return html`<div class="upload-progress" data-upload-progress hidden>
      <label for="upload-bar">Upload</label>
      <progress id="upload-bar" max="100" value="0"></progress>
      <span data-upload-percent>0 %</span>
      <button type="button" class="secondary" data-upload-cancel>Cancel upload</button>
    </div>
    <p class="hint" role="status" data-upload-status></p>`;
}

function profileChoice(name: string, checked: boolean): Html {
  const text = PROFILE_TEXT[name] ?? "";
  return choice({
    type: "radio",
    id: `profile-${name}`,
    name: "profile",
    value: name,
    checked,
    label: name,
    hint: text,
  });
}

/** A radio button or checkbox with its label and hint. */
function choice(input: {
  type: "radio" | "checkbox";
  id: string;
  name: string;
  value: string;
  checked: boolean;
  label: string;
  hint: string;
}): Html {
  return html`<div class="choice">
    <input
      type="${input.type}"
      id="${input.id}"
      name="${input.name}"
      value="${input.value}"
      ${input.checked ? "checked" : ""}
      aria-describedby="${input.id}-text"
    />
    <label for="${input.id}">${input.label}</label>
    <span id="${input.id}-text" class="hint">${input.hint}</span>
  </div>`;
}

/** The options a compression was asked for, in words: "none" when only the profile was chosen. */
export function optionsText(fields: TryFields): string {
  const chosen = [
    fields["target_size"] ? `target ${count.format(Number(fields["target_size"]))} bytes` : "",
    fields["max_image_ppi"] ? `images at most ${fields["max_image_ppi"]} ppi` : "",
    fields["grayscale"] === "true" ? "grayscale" : "",
    fields["remove_metadata"] === "true" ? "metadata removed" : "",
    fields["linearize"] === "true" ? "fast web view" : "",
    fields["ocr"] === "true" ? `OCR (${fields["ocr_languages"] || "eng"})` : "",
    fields["signatures"] === "remove" ? "signatures removed" : "",
  ].filter(Boolean);
  return chosen.join(", ") || "none";
}

function compressedNotice(result: NonNullable<TryPageOptions["result"]>, fields: TryFields): Html {
  return notice(
    "success",
    html`<h2>Compressed ${result.filename}</h2>
      <dl class="figures">
        <div>
          <dt>Profile</dt>
          <dd>${fields["profile"] ?? "balanced"}</dd>
        </div>
        <div>
          <dt>Original</dt>
          <dd>${bytes(result.original_size)}</dd>
        </div>
        <div>
          <dt>Compressed</dt>
          <dd>${bytes(result.compressed_size)}</dd>
        </div>
        <div>
          <dt>Savings</dt>
          <dd>${result.savings_percentage} %</dd>
        </div>
      </dl>
      <p class="options-used"><strong>Options:</strong> ${optionsText(fields)}</p>
      <p>
        <a href="${result.url}" class="button" download>Download the compressed PDF</a>
        <span class="hint">The link works for ${Math.round(result.expires_in / 60)} minutes.</span>
      </p>
      ${result.report ? reportCard(result.report, bytes) : ""}`,
  );
}

/** What the API's synchronous call answers with a 202: the file became a job, run in the background. */
function queuedNotice(job: NonNullable<TryPageOptions["queued"]>): Html {
  return notice(
    "info",
    html`<h2>Queued ${job.filename} as a job</h2>
      <p>${job.async_reason?.message ?? "The file is compressed in the background."}</p>
      <p class="hint">
        The API answered <code>202</code> with job <code>${job.id}</code>, charged once. Its result appears on
        <a href="/dashboard/history">History</a> when it is done.
      </p>`,
  );
}

/** The API's refusal as it answered it, so the same call from code can be recognised. */
function notCompressedNotice(error: NonNullable<TryPageOptions["error"]>): Html {
  return notice(
    "error",
    html`<h2>Not compressed</h2>
      <p>${error.message}</p>
      <p class="hint">
        The API answered <code>${error.status} ${error.code}</code>. The form below keeps what you chose.
      </p>`,
    "alert",
  );
}
