// The pages of what happened: History (recent compressions and jobs, with their results while
// they can be downloaded) and Webhooks (the account's signing secret, its rotation, the recent
// deliveries). Server-rendered like pages.ts, under the same strict CSP.
import { breakableName, html, type Html } from "./html.ts";
import {
  bytes,
  cardsTable,
  csrfField,
  type Column,
  DASHBOARD,
  layout,
  notice,
  planNeeded,
  scrollableRegion,
  secretField,
  soon,
  when,
  type Viewer,
} from "./pages.ts";
import { DELIVERY_ROWS, HISTORY_ROWS, type DeliveryRow, type HistoryRow } from "./records.ts";
import { deletedNotice, deleteLink, retentionSection, type RetentionSetting } from "./results-pages.ts";

/** A history row's result: its download link and until when it works. */
export interface ResultLink {
  url: string;
  until: Date;
}

const STATUS_TEXT: Record<HistoryRow["status"], string> = {
  queued: "Queued",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
};

export function historyPage(
  viewer: Viewer,
  rows: HistoryRow[],
  links: ReadonlyMap<string, ResultLink>,
  options: { deleted?: boolean } = {},
): string {
  return layout(
    "History",
    html`<h1>History</h1>
      ${options.deleted ? deletedNotice() : ""}
      <p>
        The last ${HISTORY_ROWS} compressions and jobs of your account, from every key and from Try it, newest first. A
        result can be downloaded here while its link works: an hour after a call, as long as the result is kept for a
        job.
      </p>
      <section class="card" aria-labelledby="recent">
        <h2 id="recent">Recent compressions</h2>
        ${rows.length ? historyTable(rows, links) : html`<p>Nothing yet: compress a file from <a href="${DASHBOARD}/try">Try it</a> or the API.</p>`}
      </section>`,
    viewer,
    "history",
  );
}

function historyTable(rows: HistoryRow[], links: ReadonlyMap<string, ResultLink>): Html {
  const columns: Column[] = [
    "Date",
    "File",
    "Profile",
    { label: "Original", num: true },
    { label: "Compressed", num: true },
  ];
  return html`<div class="table-wrap" ${scrollableRegion("recent")}>
    ${cardsTable(
      "history",
      [...columns, "Status", "Result"],
      rows.map((row) => historyRow(row, links.get(row.id))),
    )}
  </div>`;
}

const size = (n: number | null) => (n === null ? html`<span class="muted">—</span>` : bytes(n));

function historyRow(row: HistoryRow, link: ResultLink | undefined): Html {
  const how = row.jobId ? `job ${row.jobId.slice(0, 8)}… · ${row.key.name}` : `call · ${row.key.name}`;
  return html`<tr role="row">
    <td role="cell" class="when" data-label="Date">${when(row.createdAt)}</td>
    <th scope="row" role="rowheader">
      ${row.filename ? html`<span class="filename">${breakableName(row.filename)}</span>` : html`<span class="muted">(name not kept)</span>`}<br /><span
        class="muted small"
        >${how}</span
      >
    </th>
    <td role="cell" data-label="Profile">${row.profile}${withBreak(optionsList(row.options))}</td>
    <td role="cell" class="num nowrap" data-label="Original">${size(row.originalSize)}</td>
    <td role="cell" class="num nowrap" data-label="Compressed">${size(row.compressedSize)}</td>
    <td role="cell" data-label="Status">
      <span class="status status-${row.status} nowrap">${STATUS_TEXT[row.status]}</span>
      ${row.status === "failed" && row.errorCode ? html`<br /><code class="small">${breakableName(row.errorCode)}</code>` : ""}
    </td>
    <td role="cell" class="nowrap" data-label="Result">${resultCell(row, link)}${withBreak(deleteLink(row))}</td>
  </tr>`;
}

const withBreak = (part: Html | string) => (part === "" ? "" : html`<br />${part}`);

/** The options a call asked for besides its profile, as sent: `target_size=500000 · grayscale=true`. */
function optionsList(options: Record<string, string>): Html | string {
  const set = Object.entries(options);
  if (set.length === 0) return "";
  return html`<span class="muted small options"
    >${set.map(([field, value], i) => [i === 0 ? "" : " · ", html`<code>${field}=<wbr />${value}</code>`])}</span
  >`;
}

function resultCell(row: HistoryRow, link: ResultLink | undefined): Html | string {
  if (link) {
    return html`<a href="${link.url}" download aria-label="Download ${row.filename ?? "the result"}">Download</a
      ><br /><span class="muted small">until ${soon(link.until)}</span>`;
  }
  if (row.deletedAt)
    return html`<span class="muted">Deleted</span><br /><span class="muted small">${when(row.deletedAt)}</span>`;
  if (row.status === "succeeded") return html`<span class="muted">Expired</span>`;
  return html`<span class="muted">—</span>`;
}

// ---- Webhooks -----------------------------------------------------------------------------------

export interface WebhooksPageOptions {
  /** The secret's first characters and when it was made; null before it was ever made. */
  secret: { masked: string; createdAt: Date } | null;
  /** The whole secret, on the answer to "Show" or to a rotation only. */
  /** The whole secret; after a rotation, until when the replaced one still signs calls. */
  shown?: { secret: string; rotated: boolean; previousUntil: Date | null };
  deliveries: DeliveryRow[];
  /** The account's retention of results (results-pages.ts). */
  retention?: RetentionSetting;
}

export function webhooksPage(viewer: Viewer, options: WebhooksPageOptions): string {
  const corporate = viewer.session.plan === "corporate";
  return layout(
    "Webhooks",
    html`<h1>Webhooks</h1>
      <p>
        A job sent with a <code>callback_url</code> posts its result there when it ends: the event
        <code>compression_job.succeeded</code> or <code>compression_job.failed</code>, with a <code>webhook-id</code>
        that every retry keeps, signed with your account's secret. How to verify a call:
        <a href="/v1/docs">the API reference</a>.
      </p>
      ${options.shown ? shownSecret(options.shown) : ""}
      ${corporate ? secretSection(viewer, options.secret) : planNeeded(viewer.session.plan)}
      ${corporate && options.retention ? retentionSection(viewer, options.retention) : ""}
      <section class="card" aria-labelledby="deliveries">
        <h2 id="deliveries">Recent deliveries</h2>
        ${
          options.deliveries.length
            ? deliveriesTable(options.deliveries)
            : html`<p>No webhook has been sent yet: none of your jobs with a <code>callback_url</code> has ended.</p>`
        }
      </section>`,
    viewer,
    "webhooks",
  );
}

/** The whole secret, with the copy button dashboard.js enables. */
function shownSecret(shown: NonNullable<WebhooksPageOptions["shown"]>): Html {
  return notice(
    "success",
    html`<h2>${shown.rotated ? "Your new webhook secret" : "Your webhook secret"}</h2>
      ${
        shown.rotated
          ? shown.previousUntil
            ? html`<p>
                <strong
                  >Webhooks are signed with it from now on, and with the old secret too until
                  ${when(shown.previousUntil)}.</strong
                >
                Give it to your receivers before then: each call carries both signatures, so a receiver with either
                secret accepts it.
              </p>`
            : html`<p>
                <strong>Webhooks are signed with it from now on.</strong> Give it to your receivers: one still checking
                with the old secret refuses the calls.
              </p>`
          : html`<p>Keep it secret: whoever has it can sign calls your receivers accept.</p>`
      }
      ${secretField("webhook-secret", "Webhook secret", shown.secret)}`,
  );
}

function secretSection(viewer: Viewer, secret: WebhooksPageOptions["secret"]): Html {
  return html`<section class="card" aria-labelledby="secret">
    <h2 id="secret">Signing secret</h2>
    <p>
      One secret for your account: it signs the webhooks of the jobs of all your keys. The API reads it at
      <code class="nowrap">GET /v1/webhook-secret</code> too.
    </p>
    <dl class="figures">
      <div>
        <dt>Secret</dt>
        <dd><code>${secret ? `${secret.masked}…` : "not made yet"}</code></dd>
      </div>
      <div>
        <dt>Made</dt>
        <dd>${secret ? when(secret.createdAt) : "when it is first needed"}</dd>
      </div>
    </dl>
    <div class="actions">
      <form method="post" action="${DASHBOARD}/webhooks/secret">
        ${csrfField(viewer)}
        <button type="submit">Show the secret</button>
      </form>
      <form method="get" action="${DASHBOARD}/webhooks/rotate">
        <button type="submit" class="danger">Rotate…</button>
      </form>
    </div>
  </section>`;
}

const STATE_TEXT: Record<DeliveryRow["status"], string> = {
  pending: "Retrying",
  delivered: "Delivered",
  failed: "Given up",
};

function deliveriesTable(rows: DeliveryRow[]): Html {
  const columns: Column[] = [
    "Time",
    "Job",
    "Event",
    { label: "Status code", num: true },
    { label: "Attempts", num: true },
  ];
  return html`<p class="hint">The last ${DELIVERY_ROWS} deliveries, newest first.</p>
    <div class="table-wrap" ${scrollableRegion("deliveries")}>
      ${cardsTable("deliveries", [...columns, "State"], rows.map(deliveryRow))}
    </div>`;
}

function deliveryRow(row: DeliveryRow): Html {
  const state =
    row.status === "delivered"
      ? STATE_TEXT.delivered
      : row.status === "pending"
        ? html`${STATE_TEXT.pending}<br /><span class="muted small">next at ${soon(row.nextAttemptAt)}</span>`
        : STATE_TEXT.failed;
  return html`<tr role="row">
    <td role="cell" class="when" data-label="Time">${when(row.createdAt)}</td>
    <th scope="row" role="rowheader">
      <code>${row.job.id.slice(0, 8)}…</code><br /><span class="muted small filename"
        >${breakableName(row.job.filename)}</span
      >
    </th>
    <td role="cell" data-label="Event"><code>${row.event}</code></td>
    <td role="cell" class="num" data-label="Status code">
      ${row.lastStatus ?? html`<span class="muted">none</span>`}
      ${row.lastStatus === null && row.lastError ? html`<br /><span class="muted small">${row.lastError}</span>` : ""}
    </td>
    <td role="cell" class="num" data-label="Attempts">${row.attempts}</td>
    <td role="cell" class="nowrap" data-label="State">${state}</td>
  </tr>`;
}

/** The confirmation a rotation asks for (GET /webhooks/rotate): what it does, and the way back. */
export function rotateConfirmPage(viewer: Viewer, overlapMs: number): string {
  const hours = Math.round((overlapMs / 3_600_000) * 10) / 10;
  return layout(
    "Rotate the webhook secret?",
    html`<section class="card narrow stack" aria-labelledby="title">
      <h1 id="title">Rotate the webhook secret?</h1>
      ${
        overlapMs > 0
          ? html`<p>
              A new secret signs every webhook from then on, retries of earlier ones included. For ${hours} hours the
              current secret signs them too (each call carries both signatures), so your receivers keep accepting calls
              while you give them the new one; after that only the new secret works. The new secret is shown on the next
              page.
            </p>`
          : html`<p>
              A new secret replaces the current one at once: every webhook from then on, retries of earlier ones
              included, is signed with the new secret, and a receiver still checking with the old one refuses the calls
              until it is given the new one. The new secret is shown on the next page.
            </p>`
      }
      <form method="post" action="${DASHBOARD}/webhooks/rotate">
        ${csrfField(viewer)}
        <button type="submit" class="danger">Yes, rotate the secret</button>
        <a href="${DASHBOARD}/webhooks">Cancel, keep the secret</a>
      </form>
    </section>`,
    viewer,
    "webhooks",
  );
}
