// The settings tables of the docs, generated from the settings' one declaration (core/settings.ts):
// each table sits between `<!-- settings:<name> -->` and `<!-- /settings:<name> -->` in its page.
// `npm run generate:docs` rewrites them; test/unit/bin/settings-docs.test.ts fails when the
// committed pages differ from what would be generated.
import { readFile, writeFile } from 'node:fs/promises';
import { settingsTable } from '../core/settings.ts';
import { GATEWAY_SETTINGS } from '../gateway/config/settings.ts';
import { OPERATOR_SETTINGS } from '../operator/settings.ts';
import { WORKER_SETTINGS } from '../worker/settings.ts';

export const SETTINGS_TABLES = [
  { page: 'docs/configuration.md', name: 'gateway', table: () => settingsTable(GATEWAY_SETTINGS) },
  { page: 'docs/kubernetes.md', name: 'gateway-kubernetes', table: () => settingsTable(GATEWAY_SETTINGS, 'kubernetes') },
  { page: 'docs/kubernetes.md', name: 'operator', table: () => settingsTable(OPERATOR_SETTINGS) },
  { page: 'docs/failure-handling.md', name: 'gateway-failure', table: () => settingsTable(GATEWAY_SETTINGS, 'failure') },
  { page: 'docs/budgets.md', name: 'gateway-alerts', table: () => settingsTable(GATEWAY_SETTINGS, 'alerts') },
  { page: 'docs/routing-modes.md', name: 'gateway-queue', table: () => settingsTable(GATEWAY_SETTINGS, 'queue') },
  { page: 'docs/routing-modes.md', name: 'router-worker', table: () => settingsTable(WORKER_SETTINGS) },
] as const;

/** The page with the table named `name` replaced; throws when the page lacks its markers. */
export function withTable(page: string, name: string, table: string): string {
  const open = `<!-- settings:${name} -->`;
  const close = `<!-- /settings:${name} -->`;
  const start = page.indexOf(open);
  const end = page.indexOf(close);
  if (start < 0 || end < start) throw new Error(`the page has no ${open} ... ${close} markers`);
  return `${page.slice(0, start + open.length)}\n${table}\n${page.slice(end)}`;
}

/** Every page as it should be, by path. */
export async function generatedPages(root: URL): Promise<Map<string, string>> {
  const pages = new Map<string, string>();
  for (const { page, name, table } of SETTINGS_TABLES) {
    const text = pages.get(page) ?? (await readFile(new URL(page, root), 'utf8'));
    pages.set(page, withTable(text, name, table()));
  }
  return pages;
}

if (import.meta.main) {
  const root = new URL('../', import.meta.url);
  for (const [page, text] of await generatedPages(root)) await writeFile(new URL(page, root), text);
}
