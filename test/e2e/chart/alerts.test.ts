// The chart's budget-alert webhook as the gateway takes it: signed with a key from a Secret, or
// unsigned only when gateway.alerts.webhookUnsigned says so, as the gateway refuses to start with
// a webhook and no secret (--alert-webhook-unsigned). The chart refuses the same values at
// install time, with a message that names them, rather than rendering pods that cannot start.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSettings } from '../../../gateway/config/settings.ts';
import { HelmError, parseObjects, renderChart, type KubeObject } from '../../support/helm.ts';
import { KUBE_VERSION, NAMESPACE, RELEASE } from './value-sets.ts';

const URL = 'https://hooks.example.com/budget';

const render = async (alerts: object) =>
  parseObjects(await renderChart({ release: RELEASE, namespace: NAMESPACE, kubeVersion: KUBE_VERSION, values: { gateway: { alerts } } }));

async function renderError(alerts: object): Promise<string> {
  const error = await render(alerts).then(
    () => assert.fail(`rendering with ${JSON.stringify(alerts)} should fail`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof HelmError, String(error));
  return error.message;
}

/** The gateway Deployment's variables: literal values, or the Secret reference. */
function gatewayEnv(objects: KubeObject[]): Record<string, unknown> {
  const gateway = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'tollgate-gateway')!;
  return Object.fromEntries(
    gateway.spec.template.spec.containers[0].env.map((e: { name: string; value?: string; valueFrom?: object }) => [
      e.name,
      e.value ?? e.valueFrom,
    ]),
  );
}

/** The alert settings the gateway reads from those variables (a Secret's entry stands for its value). */
function settingsOf(vars: Record<string, unknown>) {
  const env = Object.fromEntries(
    Object.entries(vars)
      .filter(([name]) => name.startsWith('TOLLGATE_ALERT_'))
      .map(([name, value]) => [name, typeof value === 'string' ? value : 'a-webhook-secret-from-a-secret']),
  );
  return readSettings({}, env);
}

describe('charts/tollgate: the budget alerts webhook', () => {
  it('a webhook without a Secret is refused at install, naming the two ways out', async () => {
    const message = await renderError({ webhookUrl: URL });
    assert.match(message, /gateway\.alerts\.webhookSecret\.existingSecret/);
    assert.match(message, /gateway\.alerts\.webhookUnsigned/);
  });

  it('a Secret and webhookUnsigned together are refused as a contradiction', async () => {
    const message = await renderError({ webhookUrl: URL, webhookSecret: { existingSecret: 'budget-hooks' }, webhookUnsigned: true });
    assert.match(message, /webhookUnsigned/);
  });

  it('signed: the key comes from the Secret, and the gateway accepts the settings', async () => {
    const vars = gatewayEnv(await render({ webhookUrl: URL, webhookSecret: { existingSecret: 'budget-hooks' } }));
    assert.deepEqual(vars.TOLLGATE_ALERT_WEBHOOK_SECRET, { secretKeyRef: { name: 'budget-hooks', key: 'webhook-secret' } });
    assert.equal(vars.TOLLGATE_ALERT_WEBHOOK_UNSIGNED, undefined);
    assert.equal(settingsOf(vars).alertWebhookUrl, URL);
  });

  it('unsigned when asked for: the gateway is told so, and accepts the settings', async () => {
    const vars = gatewayEnv(await render({ webhookUrl: URL, webhookUnsigned: true }));
    assert.equal(vars.TOLLGATE_ALERT_WEBHOOK_SECRET, undefined);
    assert.equal(vars.TOLLGATE_ALERT_WEBHOOK_UNSIGNED, 'true');
    assert.equal(settingsOf(vars).alertWebhookUnsigned, true);
  });

  it('without a webhook, neither is needed', async () => {
    const vars = gatewayEnv(await render({}));
    assert.equal(vars.TOLLGATE_ALERT_WEBHOOK_URL, undefined);
    assert.equal(vars.TOLLGATE_ALERT_WEBHOOK_UNSIGNED, undefined);
  });
});
