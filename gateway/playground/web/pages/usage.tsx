// Usage: the caller's own request history, totals and spend per day.
import { UsageView } from '../components/usage-view.tsx';

export function UsagePage() {
  return (
    <section>
      <h1 tabIndex={-1}>Usage</h1>
      <p class="lead">Every request you made, refused ones included, newest first. Times and days are UTC.</p>
      <UsageView />
    </section>
  );
}
