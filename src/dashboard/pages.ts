// The dashboard's pages, rendered on the server: plain HTML forms that work without JavaScript
// (the one script only adds a copy button and Try it's upload progress), one stylesheet of this origin, no inline code, so the
// strict CSP of security.ts holds. Landmarks, labels, headings in order, a skip link and visible
// focus, for keyboards and screen readers alike. Try it is in try-page.ts; History and Webhooks
// in activity-pages.ts.
import type { Plan } from "../generated/prisma/client.ts";
import type { KeyView } from "../auth/accounts.ts";
import type { SessionSubscriber } from "../auth/sessions.ts";
import type { DayCount, UsageSummary } from "../auth/usage.ts";
import type { KeyUsage } from "./records.ts";
import { dailyChart } from "./chart.ts";
import { html, type Html } from "./html.ts";

export const DASHBOARD = "/dashboard";

export interface Viewer {
  session: SessionSubscriber;
  csrf: string;
}

export type Section = "keys" | "usage" | "history" | "webhooks" | "try";

const NAV: [Section, string, string][] = [
  ["keys", "API keys", `${DASHBOARD}/keys`],
  ["usage", "Usage", `${DASHBOARD}/usage`],
  ["history", "History", `${DASHBOARD}/history`],
  ["webhooks", "Webhooks", `${DASHBOARD}/webhooks`],
  ["try", "Try it", `${DASHBOARD}/try`],
];

const dateTime = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "medium",
  timeStyle: "short",
  timeZone: "UTC",
});
const date = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeZone: "UTC" });
export const count = new Intl.NumberFormat("en");

export const when = (value: Date | string | null) => (value ? `${dateTime.format(new Date(value))} UTC` : "never");

const clockTime = new Intl.DateTimeFormat("en-GB", { timeStyle: "short", timeZone: "UTC" });
const dayAndTime = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "UTC",
});

/** A moment near now, short: "15:50 UTC" today, "27 Nov, 15:50 UTC" another day. */
export function soon(value: Date, now = new Date()): string {
  const sameDay = value.toISOString().slice(0, 10) === now.toISOString().slice(0, 10);
  return `${(sameDay ? clockTime : dayAndTime).format(value)} UTC`;
}

/**
 * The attributes of a table's box that scrolls sideways on a narrow screen: a region named by its
 * heading, which a keyboard can reach and scroll (axe: scrollable-region-focusable).
 */
export const scrollableRegion = (labelledBy: string) =>
  html`role="region" tabindex="0" aria-labelledby="${labelledBy}"`;

/** A column of a table of records: its heading, and whether it holds figures (right-aligned). */
export type Column = string | { label: string; num: true };

/**
 * A table of records (keys, history, deliveries) that a phone shows as cards (dashboard.css): its
 * roles stated in the markup, as display: block strips them in some browsers; each row's cells carry
 * role="cell" and a data-label naming their column.
 */
export function cardsTable(className: string, columns: readonly Column[], rows: readonly Html[]): Html {
  const heading = (column: Column) =>
    typeof column === "string"
      ? html`<th scope="col" role="columnheader">${column}</th>`
      : html`<th scope="col" role="columnheader" class="num">${column.label}</th>`;
  return html`<table class="${[className, "cards"].filter(Boolean).join(" ")}" role="table">
    <thead role="rowgroup">
      <tr role="row">
        ${columns.map(heading)}
      </tr>
    </thead>
    <tbody role="rowgroup">
      ${rows}
    </tbody>
  </table>`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${count.format(n)} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export const csrfField = (viewer: Viewer) => html`<input type="hidden" name="csrf_token" value="${viewer.csrf}" />`;

export function layout(
  title: string,
  body: Html,
  viewer: Viewer | null = null,
  current: Section | null = null,
): string {
  const nav = viewer
    ? html`<nav aria-label="Dashboard">
          <ul>
            ${NAV.map(
              ([section, label, href]) =>
                html`<li><a href="${href}" ${section === current ? html`aria-current="page"` : ""}>${label}</a></li>`,
            )}
            <li><a href="/v1/docs">API reference</a></li>
          </ul>
        </nav>
        <div class="who">
          <span><strong>${viewer.session.name}</strong> · ${viewer.session.email}</span>
          <span class="plan plan-${viewer.session.plan}">${viewer.session.plan} plan</span>
          <form method="post" action="${DASHBOARD}/sign-out">
            ${csrfField(viewer)}
            <button type="submit" class="link">Sign out</button>
          </form>
        </div>`
    : "";
  return `<!doctype html>
${
  html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>${title} · Marketplace dashboard</title>
      <link rel="icon" type="image/svg+xml" href="${DASHBOARD}/assets/favicon.svg" />
      <link rel="stylesheet" href="${DASHBOARD}/assets/dashboard.css" />
      <script src="${DASHBOARD}/assets/dashboard.js" defer></script>
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href="${DASHBOARD}">Marketplace <span>document API</span></a>
        ${nav}
      </header>
      <main id="main">${body}</main>
      <footer>
        <p>The compression API: <a href="/v1/docs">reference</a> · <a href="/v1/openapi.json">OpenAPI document</a></p>
      </footer>
    </body>
  </html>`.value
}
`;
}

export function notice(
  kind: "info" | "success" | "error",
  content: Html | string,
  role: "status" | "alert" = "status",
) {
  return html`<div class="notice notice-${kind}" role="${role}">${content}</div>`;
}

export const planNeeded = (plan: Plan) =>
  notice(
    "info",
    html`<h2>API keys are part of the corporate plan</h2>
      <p>
        Your subscription is on the <strong>${plan}</strong> plan. The compression API, and so its keys, is included in
        the <strong>corporate</strong> plan only: a key cannot be created here, and a key of a subscriber off that plan
        is refused (<code>401 plan_not_eligible</code>).
      </p>
      <p>To use the API, ask your account manager to move your subscription to the corporate plan.</p>`,
  );

// ---- Sign-in ----------------------------------------------------------------------------------

export function signInPage(options: {
  email?: string;
  error?: string;
  signedOut?: boolean;
  outboxDir?: string | null;
}): string {
  return layout(
    "Sign in",
    html`<section class="card narrow" aria-labelledby="title">
      <h1 id="title">Sign in</h1>
      ${options.signedOut ? notice("success", "You are signed out.") : ""}
      ${options.error ? notice("error", options.error, "alert") : ""}
      <p>Enter the e-mail address of your subscription. We send you a link that signs you in; no password needed.</p>
      <form method="post" action="${DASHBOARD}/sign-in" class="stack">
        <label for="email">E-mail address</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="email"
          required
          maxlength="254"
          value="${options.email ?? ""}"
          ${options.error ? html`aria-invalid="true"` : ""}
        />
        <button type="submit">Email me a sign-in link</button>
      </form>
      ${
        options.outboxDir
          ? html`<p class="hint">
              This service has no mail server configured (<code>SMTP_URL</code>): the link is written to its log and to
              the outbox directory <code>${options.outboxDir}</code>.
            </p>`
          : ""
      }
    </section>`,
  );
}

export function checkEmailPage(email: string, minutes: number): string {
  return layout(
    "Check your e-mail",
    html`<section class="card narrow" aria-labelledby="title">
      <h1 id="title">Check your e-mail</h1>
      ${notice(
        "success",
        html`<p>
          If <strong>${email}</strong> belongs to a subscription, a sign-in link is on its way. It works once, within
          ${minutes} minutes.
        </p>`,
      )}
      <p>No mail after a few minutes? Check the address and <a href="${DASHBOARD}/sign-in">ask for a new link</a>.</p>
    </section>`,
  );
}

export function confirmSignInPage(code: string, email: string): string {
  return layout(
    "Confirm sign-in",
    html`<section class="card narrow" aria-labelledby="title">
      <h1 id="title">Sign in as ${email}?</h1>
      <p>This link signs you in to the dashboard once. Continue only if you asked for it.</p>
      <form method="post" action="${DASHBOARD}/sign-in/link">
        <input type="hidden" name="code" value="${code}" />
        <button type="submit">Sign in</button>
      </form>
    </section>`,
  );
}

export function linkRefusedPage(minutes: number): string {
  return layout(
    "Link not valid",
    html`<section class="card narrow" aria-labelledby="title">
      <h1 id="title">This sign-in link cannot be used</h1>
      ${notice(
        "error",
        html`<p>It has been used already, or it has expired: a link works once, within ${minutes} minutes.</p>`,
        "alert",
      )}
      <p><a href="${DASHBOARD}/sign-in">Ask for a new sign-in link</a></p>
    </section>`,
  );
}

export function errorPage(title: string, message: string, viewer: Viewer | null = null): string {
  return layout(
    title,
    html`<section class="card narrow" aria-labelledby="title">
      <h1 id="title">${title}</h1>
      ${notice("error", html`<p>${message}</p>`, "alert")}
      <p><a href="${viewer ? `${DASHBOARD}/keys` : `${DASHBOARD}/sign-in`}">Back to the dashboard</a></p>
    </section>`,
    viewer,
  );
}

// ---- Settings → API keys ------------------------------------------------------------------------

export interface KeysPageOptions {
  keys: KeyView[];
  /** The API's public origin: where the keys are used (the API, its MCP endpoint). */
  origin: string;
  created?: { name: string; prefix: string; token: string };
  revoked?: string;
  error?: string;
  name?: string;
}

export function keysPage(viewer: Viewer, options: KeysPageOptions): string {
  // Newest first.
  const keys = [...options.keys].reverse();
  return layout(
    "API keys",
    html`<p class="crumbs">Settings</p>
      <h1>API keys</h1>
      <p>Keys authenticate calls to the compression API. Revoking a key refuses it from the next request on.</p>
      ${options.created ? createdKeyNotice(options.created) : ""}
      ${
        options.revoked
          ? notice(
              "success",
              html`<p>Key <code>${options.revoked}…</code> revoked: requests with it are refused from now on.</p>`,
            )
          : ""
      }
      ${createKeySection(viewer, options)}
      <section class="card" aria-labelledby="list">
        <h2 id="list">Your keys</h2>
        ${keys.length ? keysTable(viewer, keys) : html`<p>No keys yet.</p>`}
      </section>
      ${useKeysSection(options.origin)}`,
    viewer,
    "keys",
  );
}

/** The compression API's MCP endpoint (src/compress/api/mcp.ts COMPRESSION_MCP_PATH). */
const MCP_PATH = "/v1/mcp";

/** An MCP client's configuration for the endpoint (the mcpServers entry Claude, Cursor and VS Code read). */
export function mcpClientConfig(endpoint: string): string {
  const server = { type: "http", url: endpoint, headers: { Authorization: "Bearer <your API key>" } };
  return JSON.stringify({ mcpServers: { "marketplace-compression": server } }, null, 2);
}

/**
 * Where a key is used: the API (a file, or its address as file_url, a result's url included) and the
 * MCP endpoint for AI agents, with a client's configuration to copy (docs/dashboard.md, "API keys").
 */
function useKeysSection(origin: string): Html {
  const endpoint = `${origin}${MCP_PATH}`;
  const config = mcpClientConfig(endpoint);
  return html`<section class="card" aria-labelledby="use">
    <h2 id="use">Using a key</h2>
    <h3>From your code</h3>
    <p>
      Send a PDF to <code>POST ${origin}/v1/compress</code> (or <code>/v1/unlock</code>) with
      <code>Authorization: Bearer &lt;key&gt;</code>: the file itself, or its address as <code>file_url</code> (an https
      address on a public host, or the <code>url</code> of one of your results, which is read from our storage). Every
      parameter is in the <a href="/v1/docs">API reference</a>.
    </p>
    <h3>From an AI agent (MCP)</h3>
    <p>
      Agents compress through the Model Context Protocol at this endpoint, with a key as the Bearer token: tools
      <code>compress_pdf</code> (a <code>file_url</code> or an <code>upload_id</code>), <code>get_compression</code>,
      <code>list_compressions</code>, <code>delete_compression</code> and <code>usage</code>, on the same quota and rate
      limit as the API.
    </p>
    ${secretField("mcp-endpoint", "MCP endpoint", endpoint, "Copy endpoint")}
    <div class="secret config">
      <label for="mcp-config">MCP client configuration (with your key in its Authorization header)</label>
      <textarea id="mcp-config" readonly rows="${config.split("\n").length}" spellcheck="false">${config}</textarea>
      <button type="button" data-copy="mcp-config" hidden>Copy configuration</button>
    </div>
    <p class="copy-status" aria-live="polite" data-copy-status></p>
  </section>`;
}

/** A secret in a read-only field, with the copy button dashboard.js enables and where it says what it did. */
export function secretField(id: string, label: string, value: string, button = "Copy"): Html {
  return html`<div class="secret">
      <label for="${id}">${label}</label>
      <input id="${id}" type="text" readonly value="${value}" spellcheck="false" />
      <button type="button" data-copy="${id}" hidden>${button}</button>
    </div>
    <p class="copy-status" aria-live="polite" data-copy-status></p>`;
}

/** The one time a new key's secret is shown, with the copy button dashboard.js enables. */
function createdKeyNotice(created: NonNullable<KeysPageOptions["created"]>): Html {
  return notice(
    "success",
    html`<h2>Your new key “${created.name}”</h2>
      <p><strong>Copy it now: it is shown only this once.</strong> Only a hash is kept; keep the key secret.</p>
      ${secretField("new-key", "API key", created.token)}
      <p>Use it as <code>Authorization: Bearer &lt;key&gt;</code>.</p>`,
  );
}

/** The create form on the corporate plan; elsewhere, why there is none. Either way, the last refusal. */
function createKeySection(viewer: Viewer, options: Pick<KeysPageOptions, "error" | "name">): Html {
  const error = options.error ? notice("error", options.error, "alert") : "";
  if (viewer.session.plan !== "corporate") return html`${error}${planNeeded(viewer.session.plan)}`;
  return html`<section class="card" aria-labelledby="create">
    <h2 id="create">Create a key</h2>
    ${error}
    <form method="post" action="${DASHBOARD}/keys" class="inline">
      ${csrfField(viewer)}
      <div class="field">
        <label for="key-name">Name</label>
        <input
          id="key-name"
          name="name"
          required
          maxlength="60"
          aria-describedby="key-name-hint"
          value="${options.name ?? ""}"
        />
        <span id="key-name-hint" class="hint">What the key is for, e.g. “production” or “CI”.</span>
      </div>
      <button type="submit">Create key</button>
    </form>
  </section>`;
}

function keysTable(viewer: Viewer, keys: KeyView[]): Html {
  return html`<div class="table-wrap" ${scrollableRegion("list")}>
    ${cardsTable(
      "",
      ["Name", "Prefix", "Created", "Last used", "Status"],
      keys.map((key) => keyRow(viewer, key)),
    )}
  </div>`;
}

/**
 * The confirmation a revocation asks for (GET /keys/{id}/revoke): what it does, the form that does
 * it, and the way back. Without JavaScript, so under the page's strict CSP.
 */
export function revokeConfirmPage(viewer: Viewer, key: { id: string; name: string; prefix: string }): string {
  return layout(
    "Revoke this key?",
    html`<section class="card narrow stack" aria-labelledby="title">
      <h1 id="title">Revoke ${key.name} (<code>${key.prefix}…</code>)?</h1>
      <p>
        Every request with this key is refused from then on (401 invalid_api_key), including jobs and uploads your
        programs send with it. This cannot be undone: a new key would have to be created and given to them.
      </p>
      <form method="post" action="${DASHBOARD}/keys/${key.id}/revoke">
        ${csrfField(viewer)}
        <button type="submit" class="danger">Yes, revoke ${key.name}</button>
        <a href="${DASHBOARD}/keys">Cancel, keep the key</a>
      </form>
    </section>`,
    viewer,
    "keys",
  );
}

/** A key's row: a revoked key says when; an active one leads to its revocation, confirmed first. */
function keyRow(viewer: Viewer, key: KeyView): Html {
  return html`<tr role="row">
    <th scope="row" role="rowheader">${key.name}</th>
    <td role="cell" class="nowrap" data-label="Prefix"><code>${key.prefix}…</code></td>
    <td role="cell" class="nowrap" data-label="Created">${when(key.createdAt)}</td>
    <td role="cell" class="nowrap" data-label="Last used">${when(key.lastUsedAt)}</td>
    <td role="cell" class="nowrap" data-label="Status">
      ${
        key.revokedAt
          ? html`<span class="muted">Revoked<br />${when(key.revokedAt)}</span>`
          : html`<form method="get" action="${DASHBOARD}/keys/${key.id}/revoke">
              <button type="submit" class="danger" aria-label="Revoke ${key.name} (${key.prefix}…)">Revoke…</button>
            </form>`
      }
    </td>
  </tr>`;
}

// ---- Usage --------------------------------------------------------------------------------------

export function usagePage(viewer: Viewer, usage: UsageSummary, days: DayCount[], perKey: KeyUsage[]): string {
  const monthName = new Intl.DateTimeFormat("en-GB", { month: "long", year: "numeric", timeZone: "UTC" }).format(
    usage.periodStart,
  );
  const daysLeft = Math.ceil((usage.resetsAt.getTime() - Date.now()) / 86_400_000);
  return layout(
    "Usage",
    html`<h1>Usage</h1>
      <section class="card" aria-labelledby="month">
        <h2 id="month">${monthName}</h2>
        <dl class="figures">
          <div>
            <dt>Plan</dt>
            <dd>${usage.plan}</dd>
          </div>
          <div>
            <dt>Monthly quota</dt>
            <dd>${count.format(usage.monthlyQuota)}</dd>
          </div>
          <div>
            <dt>Used</dt>
            <dd>${count.format(usage.used)}</dd>
          </div>
          <div>
            <dt>Remaining</dt>
            <dd>${count.format(usage.remaining)}</dd>
          </div>
          <div>
            <dt>Renews</dt>
            <dd>${date.format(usage.resetsAt)} <span class="muted">(in ${daysLeft} days)</span></dd>
          </div>
        </dl>
        <label for="quota-used" class="hint">Quota used</label>
        <progress id="quota-used" max="${Math.max(1, usage.monthlyQuota)}" value="${usage.used}">
          ${usage.used} of ${usage.monthlyQuota}
        </progress>
        <p class="hint">
          The quota counts successful compressions per calendar month in UTC; it renews at 00:00 UTC on the first day of
          the month. Refused and failed attempts are not charged. The same numbers: <code>GET /v1/usage</code>.
        </p>
      </section>
      <section class="card" aria-labelledby="per-day">
        <h2 id="per-day">Compressions per day</h2>
        ${dailyChart(days)}
      </section>
      <section class="card" aria-labelledby="per-key">
        <h2 id="per-key">Per key this month</h2>
        ${perKey.length ? keyUsageTable(perKey) : html`<p>No keys yet.</p>`}
      </section>`,
    viewer,
    "usage",
  );
}

/** This month's compressions per key: charged successes, and attempts refused or failed (not charged). */
function keyUsageTable(keys: KeyUsage[]): Html {
  return html`<div class="table-wrap" ${scrollableRegion("per-key")}>
      <table>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col" class="num">Succeeded (charged)</th>
            <th scope="col" class="num">Refused or failed</th>
          </tr>
        </thead>
        <tbody>
          ${keys.map(
            (key) =>
              html`<tr>
                <th scope="row">
                  ${key.name}
                  <code>${key.prefix}…</code>${key.revokedAt ? html` <span class="muted">(revoked)</span>` : ""}
                </th>
                <td class="num">${count.format(key.succeeded)}</td>
                <td class="num">${count.format(key.failed)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <p class="hint">
      Every key used this month is listed, revoked ones too; Try it counts under the key it was run with.
    </p>`;
}
