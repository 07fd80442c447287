// In Kubernetes mode a page shows a write once the operator has published it, which the page
// cannot know: it reads once at once, then again every half second for about five seconds
// (gateway/playground/web/read-after-write.ts), "much longer than the operator needs" on a quiet
// machine. On a loaded one the operator can need longer, and the page then rightly shows what is
// served, without the write. So the tests pace the page by the publication itself, the signal
// the page stands in for: the page's first read after the write goes through (if the change is
// not served yet, the page starts reading again, which is what the tests show), and each later
// read is held, as a slow network would hold it, until the gateway serves the change. The page
// then shows the write whatever the machine's speed, and a publication that never comes fails
// the test saying so, with the operators' output.
import type { Page, Route } from 'playwright-core';
import { until } from '../support/poll.ts';

export interface PacedReads {
  /** Settles once the gateway serves the change; rejects, saying what it waited for, if it never does. */
  readonly published: Promise<void>;
  /** Lets the page's reads through again. */
  stop(): Promise<void>;
}

/**
 * From now on, holds the page's GET requests to `path`, after the first, until `served()` holds;
 * polls `served` (what the gateway serves, read through its admin API) until it does, bounded by
 * `until`'s bound on the operator publishing a change. Call before the write.
 */
export async function paceReadsByPublication(
  page: Page,
  path: string,
  served: () => Promise<boolean>,
  what: string,
  processes: readonly { output(): string }[],
): Promise<PacedReads> {
  const published = until(async () => (await served()) || undefined, what, processes).then(() => undefined);
  // The test awaits `published`; a held read must not fail the page when it rejects.
  const settled = published.catch(() => undefined);
  let reads = 0;
  const pattern = `**${path}`;
  const pace = async (route: Route) => {
    if (route.request().method() === 'GET' && ++reads > 1) await settled;
    // The page may have moved on (another hash, a closed context) while the read was held.
    await route.continue().catch(() => undefined);
  };
  await page.route(pattern, pace);
  return { published, stop: () => page.unroute(pattern, pace) };
}
