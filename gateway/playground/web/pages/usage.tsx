// Usage: the caller's own request history, totals and spend per day; for admins, the spend
// report of every user or router too.
import { UsageView } from '../components/usage-view.tsx';
import { SpendReportView } from '../components/spend-report.tsx';
import { useSession } from '../context.ts';

export function UsagePage() {
  const session = useSession();
  return (
    <section>
      <h1 tabIndex={-1}>Usage</h1>
      <p class="lead">Every request you made, refused ones included, newest first. Times and days are UTC.</p>
      <UsageView />
      {session.me.role === 'admin' && <SpendReportView />}
    </section>
  );
}
