// Budget alerts as Kubernetes Events: the operator joins a consumer group of its own on the
// store's alerts (store/budget-alerts.ts), so every alert raised by any gateway is recorded once,
// as a Warning event `BudgetThresholdReached` on the GatewayUser (a user's or a key's alert) or
// the GatewayTeam (a team's) whose id it names: `kubectl describe` and `kubectl get events` show
// it beside the resource's spending.
import type { AlertConsumer, BudgetAlerts } from '../../core/store/budget-alerts.ts';
import type { Log } from '../../core/log.ts';
import { formatScaled } from '../../core/money/decimal.ts';
import type { EventRecorder } from '../kube/events.ts';
import type { Cache } from '../kube/resources.ts';
import { keyOf } from './desired-routing.ts';
import type { TeamObject } from './teams.ts';
import { idOwner, type UserObject } from './user-state.ts';

export const OPERATOR_ALERT_GROUP = 'tollgate-operator';

export interface AlertEventDeps {
  readonly alerts: BudgetAlerts;
  readonly users: Cache<UserObject>;
  readonly teams: Cache<TeamObject>;
  readonly events: EventRecorder;
  readonly log: Log;
  readonly retryAfterMs: number;
}

export function recordAlertEvents(deps: AlertEventDeps): AlertConsumer {
  return deps.alerts.consume(
    OPERATOR_ALERT_GROUP,
    async (alert) => {
      const team = alert.level === 'team';
      const objects: (UserObject | TeamObject)[] = team ? deps.teams.list() : deps.users.list();
      // A key's alert goes on its user's GatewayUser.
      const id = alert.level === 'key' ? alert.user : alert.id;
      const owner = idOwner(objects, id);
      const object = objects.find((o) => keyOf(o.metadata) === owner);
      // Not a resource of this operator (a file-mode user, or one deleted since): nothing to record it on.
      if (!object) return;
      const whose = alert.level === 'key' ? `API key ${alert.id} of this user` : team ? 'this team' : 'this user';
      await deps.events.record(object, {
        type: 'Warning',
        reason: 'BudgetThresholdReached',
        message: `${whose} has spent ${formatScaled(alert.spentMicros, 6)} of its budget of ${formatScaled(alert.budgetMicros, 6)}: ${alert.percent}% reached (period ${alert.period})`,
      });
      deps.log.info({ alert: alert.key, object: keyOf(object.metadata) }, 'budget alert recorded as an event');
    },
    { retryAfterMs: deps.retryAfterMs },
  );
}
