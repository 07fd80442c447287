// Account: the caller's budget, what is spent and held, what remains in the current period, and
// their own API keys.
import { useEffect, useState } from 'preact/hooks';
import type { Me, User } from '../api.ts';
import { useSession } from '../context.ts';
import { money, utcDate, utcTime } from '../format.ts';
import { readable } from '../messages.ts';
import { KeysPanel } from '../components/keys.tsx';
import { LoadError } from '../components/notice.tsx';

export function AccountPage() {
  const session = useSession();
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    session
      .call<Me>('GET', '/v1/me')
      .then(setMe)
      .catch((e) => setError(readable(e)));
  }, []);
  return (
    <section>
      <h1 tabIndex={-1}>Account</h1>
      <LoadError error={error} />
      {me && <BudgetSummary user={me} />}
      <KeysPanel base="/v1/me/keys" currentKeyId={session.me.key.id} ownWithSignIn={session.key === ''} />
    </section>
  );
}

/** Budget, spent, held, remaining and the period, for any user (Account and an admin's user page). */
export function BudgetSummary({ user }: { user: User }) {
  return (
    <section aria-labelledby={`budget-${user.id}`}>
      <h2 id={`budget-${user.id}`}>Budget</h2>
      <dl class="totals budget">
        <div>
          <dt>Budget</dt>
          <dd>{money(user.budget)}</dd>
        </div>
        <div>
          <dt>Spent</dt>
          <dd>{money(user.spent)}</dd>
        </div>
        <div>
          <dt>Held by requests in flight</dt>
          <dd>{money(user.reserved)}</dd>
        </div>
        <div>
          <dt>Remaining</dt>
          <dd>{money(user.remaining)}</dd>
        </div>
        <div>
          <dt>Period</dt>
          <dd>{periodText(user)}</dd>
        </div>
      </dl>
      <p class="hint">
        User <code>{user.id}</code> ({user.name}), role {user.role}, since {utcTime(user.created_at)}.
      </p>
    </section>
  );
}

function periodText(user: User): string {
  if (user.budget_period === null) return 'none: the budget never resets';
  return `${user.budget_period}, ${utcDate(user.period_start)} to ${utcDate(user.period_end)} (resets ${utcTime(user.period_end)})`;
}
