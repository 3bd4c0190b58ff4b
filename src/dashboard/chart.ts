// The Usage page's chart: compressions per day of this month, successes and refusals stacked, as
// inline SVG (no script, no external asset; colours come from the stylesheet by class, since the
// CSP allows no inline styles). Described for screen readers by its title and summary, and the
// same numbers follow as a table.
import type { DayCount } from "../auth/usage.ts";
import { html, type Html } from "./html.ts";

const WIDTH = 640;
const HEIGHT = 200;
const LEFT = 36;
const BOTTOM = 24;
const TOP = 10;

/** A round top for the scale: 1, 2, 5, 10, 20, 50, … at or above max. */
function scaleTop(max: number): number {
  if (max <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= max) ?? 10 * power;
}

export function dailyChart(days: DayCount[]): Html {
  const total = days.reduce((sum, d) => ({ ok: sum.ok + d.succeeded, failed: sum.failed + d.failed }), {
    ok: 0,
    failed: 0,
  });
  const top = scaleTop(Math.max(0, ...days.map((d) => d.succeeded + d.failed)));
  const plotHeight = HEIGHT - BOTTOM - TOP;
  // The whole month is drawn, the days still to come empty.
  const first = new Date(`${days[0]?.day ?? "2000-01-01"}T00:00:00Z`);
  const monthDays = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  const slot = (WIDTH - LEFT) / monthDays;
  const bar = Math.max(2, slot * 0.7);
  const y = (value: number) => TOP + plotHeight - (value / top) * plotHeight;
  const bars = days.map((d, i) => {
    const x = LEFT + i * slot + (slot - bar) / 2;
    const okTop = y(d.succeeded);
    const failedTop = y(d.succeeded + d.failed);
    const dayNumber = Number(d.day.slice(8));
    return html`<g>
      <title>${d.day}: ${d.succeeded} succeeded, ${d.failed} refused or failed</title>
      ${d.succeeded ? html`<rect class="bar-ok" x="${x.toFixed(1)}" y="${okTop.toFixed(1)}" width="${bar.toFixed(1)}" height="${(y(0) - okTop).toFixed(1)}" />` : ""}
      ${d.failed ? html`<rect class="bar-failed" x="${x.toFixed(1)}" y="${failedTop.toFixed(1)}" width="${bar.toFixed(1)}" height="${(okTop - failedTop).toFixed(1)}" />` : ""}
      ${dayNumber === 1 || dayNumber % 5 === 0 ? html`<text class="axis" x="${(x + bar / 2).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle">${dayNumber}</text>` : ""}
    </g>`;
  });
  const grid = [0, top / 2, top].map(
    (value) =>
      html`<line class="grid" x1="${LEFT}" x2="${WIDTH}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}" />
        <text class="axis" x="${LEFT - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end">${value}</text>`,
  );
  return html`<figure class="chart">
      <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-summary">
        <title id="chart-title">Compressions per day this month</title>
        <desc id="chart-summary">${total.ok} succeeded and ${total.failed} refused or failed since the 1st.</desc>
        ${grid}${bars}
      </svg>
      <figcaption>
        <span class="legend"><span class="swatch swatch-ok"></span>Succeeded (${total.ok})</span>
        <span class="legend"
          ><span class="swatch swatch-failed"></span>Refused or failed, not charged (${total.failed})</span
        >
      </figcaption>
    </figure>
    <details>
      <summary>The numbers per day</summary>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Succeeded</th>
              <th scope="col">Refused or failed</th>
            </tr>
          </thead>
          <tbody>
            ${days.map(
              (d) =>
                html`<tr>
                  <th scope="row">${d.day}</th>
                  <td>${d.succeeded}</td>
                  <td>${d.failed}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </details>`;
}
