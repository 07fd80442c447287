// The chart's Grafana dashboard as the tests read it (charts/tollgate/dashboards/): its panels, and
// each panel's queries with Grafana's variables ($__rate_interval, $__range, $router) filled in.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CHART } from './helm.ts';

export interface Panel {
  readonly type: string;
  readonly title: string;
  readonly gridPos: { readonly x: number; readonly y: number; readonly w: number; readonly h: number };
  readonly targets?: readonly { readonly expr: string; readonly legendFormat?: string }[];
}

export interface Dashboard {
  readonly title: string;
  readonly uid: string;
  readonly panels: readonly Panel[];
}

export const DASHBOARD_FILE = join(CHART, 'dashboards/tollgate-overview.json');

export async function readDashboard(): Promise<Dashboard> {
  return JSON.parse(await readFile(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** `expr` with each of Grafana's variables replaced by its value (`{ $__rate_interval: '1m' }`). */
export function fillVariables(expr: string, variables: Readonly<Record<string, string>>): string {
  return Object.entries(variables).reduce((text, [name, value]) => text.replaceAll(name, value), expr);
}

/** Every query of the dashboard, filled, with the title of its panel. */
export function dashboardQueries(dashboard: Dashboard, variables: Readonly<Record<string, string>>): { panel: string; expr: string }[] {
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: fillVariables(target.expr, variables) })),
  );
}
