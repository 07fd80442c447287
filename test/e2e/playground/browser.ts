// The browser of the Playground tests: Debian's chromium driven by playwright-core (a test
// tool's own browser download does not work here), one per test file, closed in `after`. The
// helpers build the Playground first when its sources are newer than dist/playground, so a file
// run on its own serves what the sources say.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ensurePlaygroundBuilt } from '../../../gateway/playground/build.ts';
import { poll } from '../../support/eventually.ts';
import { SETTLE_MS } from '../../support/patience.ts';

export const SCREENSHOTS = join(import.meta.dirname, '..', '..', '..', 'test-output', 'screenshots');
/** Screenshots are taken at one fixed size, so the docs' images are comparable. */
export const VIEWPORT = { width: 1280, height: 800 } as const;
/**
 * How long one page step may take (a click, a locator to appear): generous, since nothing here
 * asserts on timing and the browser is the heaviest process of a test. Beside two CPU-bound
 * processes on a loaded 2-core machine, a sign-in click once took more than 30 s.
 */
export const WAIT_MS = 2 * SETTLE_MS;

export interface PlaygroundBrowser {
  readonly browser: Browser;
  /** A fresh browser context (its own sessionStorage) with a page, and what the page reported. */
  open(baseUrl: string): Promise<OpenPage>;
  close(): Promise<void>;
}

export interface OpenPage {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors and page errors (a CSP violation is one), but not refused requests. */
  readonly problems: string[];
  /** Every URL the page requested, to check the key never appears in one. */
  readonly requestedUrls: string[];
}

export async function launchPlaygroundBrowser(): Promise<PlaygroundBrowser> {
  await ensurePlaygroundBuilt();
  await mkdir(SCREENSHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    async open(baseUrl) {
      const context = await browser.newContext({ viewport: VIEWPORT, baseURL: baseUrl });
      context.setDefaultTimeout(WAIT_MS);
      const page = await context.newPage();
      const problems: string[] = [];
      const requestedUrls: string[] = [];
      page.on('console', (message) => {
        // A refused request (401, 402...) is logged by the browser itself; the tests check
        // what the page shows for it. Anything else (a CSP violation, a script error) counts.
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('request', (request) => requestedUrls.push(request.url()));
      return { context, page, problems, requestedUrls };
    },
    // Pages first, then the browser: nothing is left talking to a browser that is going away.
    async close() {
      await Promise.all(browser.contexts().map((context) => context.close().catch(() => {})));
      await browser.close();
    },
  };
}

/** Writes test-output/screenshots/<prefix>-<name>.png (prefix `kubernetes` for the Kubernetes-mode test). */
export function screenshot(page: Page, name: string, prefix = 'playground'): Promise<Buffer> {
  return page.screenshot({ path: join(SCREENSHOTS, `${prefix}-${name}.png`), fullPage: true });
}

/** Polls `read` until `accept` holds, for values a locator cannot wait on (sessionStorage...). */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string): Promise<T> {
  const { value, accepted } = await poll(read, accept, { timeoutMs: WAIT_MS, intervalMs: 100 });
  if (!accepted) throw new Error(`${what}: still ${JSON.stringify(value)} after ${WAIT_MS} ms`);
  return value as T;
}
