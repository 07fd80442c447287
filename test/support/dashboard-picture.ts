// A picture of the chart's Grafana dashboard as it reads a real Prometheus, for
// docs/observability.md and for the test that every panel draws something: each panel at its place
// in Grafana's 24-column grid, its queries run over a time range (query_range), a time series as
// lines, a stat as its number, a table or bar gauge as its rows. Drawn as SVG in an HTML page,
// photographed by Debian's chromium through playwright-core. It is not Grafana's rendering (Grafana
// is not packaged for Debian): the panels' queries, layout and titles are the dashboard's own.
import { chromium } from 'playwright-core';
import type { RunningPrometheus, RangeSeries } from './prometheus.ts';
import { fillVariables, type Dashboard } from './dashboard.ts';

export interface DrawnPanel {
  readonly title: string;
  /** The series its queries returned over the range. */
  readonly series: number;
}

const COLUMN_PX = 64;
const ROW_PX = 30;
const COLORS = ['#73bf69', '#f2cc0c', '#5794f2', '#ff780a', '#b877d9', '#f2495c', '#8ab8ff', '#fade2a'];

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A series' legend as Grafana writes it: `{{label}}` filled from the labels, else the labels themselves. */
function legend(format: string | undefined, labels: Record<string, string>): string {
  if (format && format !== '__auto') return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_all, name: string) => labels[name] ?? '');
  const pairs = Object.entries(labels).filter(([name]) => name !== '__name__');
  return pairs.length === 0 ? 'value' : pairs.map(([name, value]) => `${name}=${value}`).join(', ');
}

const number = (value: number) =>
  !Number.isFinite(value) ? '–' : Math.abs(value) >= 100 || value === 0 ? value.toFixed(0) : value.toPrecision(3);

/** Lines of each series over the range, with the y axis' top and the legend. */
function lines(series: readonly (RangeSeries & { name: string })[], width: number, height: number, start: number, end: number): string {
  const values = series.flatMap((s) => s.values.map(([, v]) => Number(v)).filter(Number.isFinite));
  const top = Math.max(...values, 0) || 1;
  const plotHeight = height - 18 - Math.min(series.length, 4) * 14;
  const x = (t: number) => 36 + ((t - start) / (end - start)) * (width - 44);
  const y = (v: number) => 6 + plotHeight - (v / top) * plotHeight;
  const paths = series.map((s, i) => {
    const points = s.values.filter(([, v]) => Number.isFinite(Number(v))).map(([t, v]) => `${x(t).toFixed(1)},${y(Number(v)).toFixed(1)}`);
    return `<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1.5" points="${points.join(' ')}"/>`;
  });
  const keys = series
    .slice(0, 4)
    .map(
      (s, i) =>
        `<text x="36" y="${plotHeight + 22 + i * 14}" fill="${COLORS[i % COLORS.length]}" font-size="11">▬ ${escapeHtml(s.name.slice(0, 70))}</text>`,
    );
  return `<svg width="${width}" height="${height}">
    <line x1="36" y1="${y(0)}" x2="${width - 8}" y2="${y(0)}" stroke="#444"/>
    <text x="2" y="14" fill="#aaa" font-size="10">${number(top)}</text><text x="2" y="${y(0)}" fill="#aaa" font-size="10">0</text>
    ${paths.join('')}${keys.join('')}</svg>`;
}

/** The last value of each series, as rows (a table, a bar gauge, a stat). */
function rows(series: readonly (RangeSeries & { name: string })[], big: boolean): string {
  const last = series.map((s) => ({ name: s.name, value: Number(s.values.at(-1)?.[1]) }));
  if (big) return `<div class="stat">${last.map((r) => number(r.value)).join(' ') || '–'}</div>`;
  return `<table>${last.map((r) => `<tr><td>${escapeHtml(r.name)}</td><td class="v">${number(r.value)}</td></tr>`).join('')}</table>`;
}

/**
 * Draws `dashboard` over [start, end] (seconds since the epoch) from `prometheus`, filling
 * Grafana's variables as `variables` says, into a PNG at `path`; resolves with what each panel drew.
 */
export async function drawDashboard(
  dashboard: Dashboard,
  prometheus: RunningPrometheus,
  range: { readonly start: number; readonly end: number },
  variables: Readonly<Record<string, string>>,
  path: string,
): Promise<DrawnPanel[]> {
  const drawn: DrawnPanel[] = [];
  const boxes: string[] = [];
  for (const panel of dashboard.panels) {
    const { x, y, w, h } = panel.gridPos;
    const style = `left:${x * COLUMN_PX}px;top:${y * ROW_PX}px;width:${w * COLUMN_PX - 6}px;height:${h * ROW_PX - 6}px`;
    if (panel.type === 'row') {
      boxes.push(`<div class="row" style="${style}">${escapeHtml(panel.title)}</div>`);
      continue;
    }
    const series: (RangeSeries & { name: string })[] = [];
    for (const target of panel.targets ?? []) {
      const step = Math.max(1, Math.round((range.end - range.start) / 120));
      for (const s of await prometheus.queryRange(fillVariables(target.expr, variables), range.start, range.end, step))
        series.push({ ...s, name: legend(target.legendFormat, s.metric) });
    }
    drawn.push({ title: panel.title, series: series.length });
    const width = w * COLUMN_PX - 6;
    const height = h * ROW_PX - 30;
    const body =
      panel.type === 'timeseries' || panel.type === 'state-timeline'
        ? lines(series, width, height, range.start, range.end)
        : rows(series, panel.type === 'stat');
    boxes.push(`<div class="panel" style="${style}"><div class="title">${escapeHtml(panel.title)}</div>${body}</div>`);
  }
  const bottom = Math.max(...dashboard.panels.map((p) => p.gridPos.y + p.gridPos.h));
  const html = `<!doctype html><html><head><style>
    body { margin: 0; background: #111217; font-family: sans-serif; color: #ccccdc; }
    .board { position: relative; width: ${24 * COLUMN_PX}px; height: ${bottom * ROW_PX}px; margin: 8px; }
    .panel, .row { position: absolute; box-sizing: border-box; }
    .panel { background: #181b1f; border: 1px solid #2c3235; border-radius: 2px; padding: 4px; overflow: hidden; }
    .row { font-weight: bold; font-size: 14px; padding-top: 6px; }
    .title { font-size: 12px; font-weight: 600; margin-bottom: 4px; }
    .stat { font-size: 44px; color: #73bf69; text-align: center; margin-top: 40px; }
    table { font-size: 11px; width: 100%; } td.v { text-align: right; color: #73bf69; }
  </style></head><body><h3 style="margin:8px">${escapeHtml(dashboard.title)}</h3><div class="board">${boxes.join('')}</div></body></html>`;
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 24 * COLUMN_PX + 16, height: 900 } });
    await page.setContent(html);
    await page.screenshot({ path, fullPage: true });
  } finally {
    await browser.close();
  }
  return drawn;
}
