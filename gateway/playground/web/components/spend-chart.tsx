// Spend per day as inline SVG bars (no chart library), with a text summary for screen readers
// and the same numbers as a table behind a disclosure.
import type { DailyUsage } from '../api.ts';
import { money } from '../format.ts';

const WIDTH = 720;
const HEIGHT = 160;

export function SpendChart({ daily, title = 'Spend per day (UTC, all models)' }: { daily: DailyUsage; title?: string }) {
  const days = daily.data;
  const top = Math.max(...days.map((d) => d.cost), 0);
  const busiest = days.reduce((best, d) => (d.cost > best.cost ? d : best), days[0] ?? { date: '', cost: 0 });
  const slot = WIDTH / Math.max(days.length, 1);
  const summary =
    top === 0
      ? `No spend from ${daily.data[0]?.date} to ${daily.data.at(-1)?.date}.`
      : `Spend per day from ${days[0]?.date} to ${days.at(-1)?.date}: ${money(daily.totals.cost)} in total, at most ${money(top)} on ${busiest.date}.`;
  return (
    <figure class="chart">
      <figcaption>
        {title} <span class="hint">highest day: {money(top)}</span>
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={summary} preserveAspectRatio="none">
        <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} class="axis" />
        {days.map((d, i) => {
          const h = top === 0 ? 0 : Math.max((d.cost / top) * (HEIGHT - 8), d.cost > 0 ? 2 : 0);
          return (
            <rect key={d.date} class="bar" x={i * slot + slot * 0.15} y={HEIGHT - h} width={slot * 0.7} height={h}>
              <title>{`${d.date}: ${money(d.cost)} (${d.requests} requests)`}</title>
            </rect>
          );
        })}
      </svg>
      <p class="chart-axis" aria-hidden="true">
        <span>{days[0]?.date}</span>
        <span>{days.at(-1)?.date}</span>
      </p>
      <details>
        <summary>Spend per day as a table</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Requests</th>
                <th scope="col">Cost</th>
              </tr>
            </thead>
            <tbody>
              {days
                .filter((d) => d.requests > 0)
                .map((d) => (
                  <tr key={d.date}>
                    <td>{d.date}</td>
                    <td>{d.requests}</td>
                    <td>{money(d.cost)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
