// The subscriber's results under their control, in the dashboard: "Delete now" on a History row
// (asked for first, like a key's revocation) and the account's retention of results on the
// Webhooks page (how long a result is kept when a request does not say). Server-rendered like
// pages.ts, under the same strict CSP.
import { html, type Html } from "./html.ts";
import { csrfField, DASHBOARD, layout, notice, when, type Viewer } from "./pages.ts";
import type { HistoryRow } from "./records.ts";

/** "Delete now…" on a History row whose record still has something to delete (a result, a file name). */
export function deleteLink(
  row: Pick<HistoryRow, "id" | "filename" | "status" | "deletedAt" | "objectName">,
): Html | string {
  if (row.deletedAt || row.status === "queued" || row.status === "running") return "";
  if (!row.filename && !row.objectName) return "";
  return html`<a
    class="small"
    href="${DASHBOARD}/history/${row.id}/delete"
    aria-label="Delete now… ${row.filename ?? "this result"}"
    >Delete now…</a
  >`;
}

/** The notice on History after a deletion. */
export const deletedNotice = () =>
  notice(
    "success",
    html`<p>
      The result, its upload and its file name were deleted from storage. The row stays: it is what was charged.
    </p>`,
  );

/** The confirmation a deletion asks for (GET /history/{id}/delete). */
export function deleteConfirmPage(viewer: Viewer, row: Pick<HistoryRow, "id" | "filename" | "createdAt">): string {
  return layout(
    "Delete this result now?",
    html`<section class="card narrow stack" aria-labelledby="title">
      <h1 id="title">Delete this result now?</h1>
      <p>
        <strong class="filename">${row.filename ?? "(name not kept)"}</strong>, ${when(row.createdAt)}: the compressed
        file, the file you sent and any direct upload are deleted from storage at once, and the name is forgotten.
        Download links already handed out stop working. The compression stays in your history and usage, without its
        name. This cannot be undone.
      </p>
      <form method="post" action="${DASHBOARD}/history/${row.id}/delete">
        ${csrfField(viewer)}
        <button type="submit" class="danger">Yes, delete it now</button>
        <a href="${DASHBOARD}/history">Cancel, keep it</a>
      </form>
    </section>`,
    viewer,
    "history",
  );
}

/** The account's retention of results, and the longest the service keeps one. */
export interface RetentionSetting {
  /** Seconds (0: until the first complete download); null: the maximum. */
  seconds: number | null;
  maxSeconds: number;
  /** Just saved: say so. */
  saved?: boolean;
  /** The value sent was refused: say why. */
  error?: string;
}

/** A number of seconds in words: "24 hours", "10 minutes", "90 seconds". */
export function duration(seconds: number): string {
  const units: [number, string][] = [
    [86_400, "day"],
    [3_600, "hour"],
    [60, "minute"],
  ];
  for (const [size, unit] of units) {
    if (seconds % size === 0 && seconds >= size) return `${seconds / size} ${unit}${seconds === size ? "" : "s"}`;
  }
  return `${seconds} second${seconds === 1 ? "" : "s"}`;
}

function currentRetention(setting: RetentionSetting): string {
  if (setting.seconds === null) return `the maximum, ${duration(setting.maxSeconds)}`;
  if (setting.seconds === 0) return "until the first complete download";
  return duration(setting.seconds);
}

/** The Webhooks page's section: the account's default retention, and its form. */
export function retentionSection(viewer: Viewer, setting: RetentionSetting): Html {
  const value = setting.seconds === null ? "" : String(setting.seconds);
  return html`<section class="card" aria-labelledby="retention">
    <h2 id="retention">Result retention</h2>
    ${setting.saved ? notice("success", html`<p>Saved: results are kept ${currentRetention(setting)}.</p>`) : ""}
    ${setting.error ? notice("error", html`<p>${setting.error}</p>`) : ""}
    <p>
      How long a compressed file is kept for download when a request does not say (its <code>retention</code> field
      does). Now: <strong>${currentRetention(setting)}</strong>. Then it is deleted from storage, with the file you sent
      and its name; the compression stays in your history and usage.
    </p>
    <form method="post" action="${DASHBOARD}/webhooks/retention" class="stack">
      ${csrfField(viewer)}
      <label for="retention-seconds">Keep results for (seconds)</label>
      <input
        id="retention-seconds"
        name="retention"
        type="number"
        inputmode="numeric"
        min="0"
        max="${String(setting.maxSeconds)}"
        step="1"
        value="${value}"
        aria-describedby="retention-hint"
      />
      <p id="retention-hint" class="hint">
        0: until the first complete download. Empty: the maximum, ${duration(setting.maxSeconds)} (${setting.maxSeconds}
        s), which is also the most any result is kept.
      </p>
      <div class="actions"><button type="submit">Save retention</button></div>
    </form>
  </section>`;
}
