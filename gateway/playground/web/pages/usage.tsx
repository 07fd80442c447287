// Usage: the caller's own request history, totals and spend per day, and the spend report grouped
// by team, user, key (and for admins router and provider), as far as the caller may see.
import { UsageView } from '../components/usage-view.tsx';
import { SpendReportView } from '../components/spend-report.tsx';

export function UsagePage() {
  return (
    <section>
      <h1 tabIndex={-1}>Usage</h1>
      <p class="lead">Every request you made, refused ones included, newest first. Times and days are UTC.</p>
      <UsageView />
      <SpendReportView />
    </section>
  );
}
