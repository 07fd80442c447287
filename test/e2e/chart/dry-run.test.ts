// Each rendering of charts/tollgate (value-sets.ts) applied with `kubectl apply --dry-run=server`
// to the real kube-apiserver of the end-to-end harness (1.20.2), so every object is validated by
// Kubernetes itself: its schema, defaulting and admission, without anything being stored. The
// CRDs (the chart's crds/), the release namespace and minimal ServiceMonitor and PrometheusRule CRDs exist first,
// as they would on a cluster with the Prometheus Operator.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CHART, parseObjects, renderChart } from '../../support/helm.ts';
import { startControlPlane, type ControlPlane } from '../support/control-plane.ts';
import { NAMESPACE, VALUE_SETS, WATCHED_NAMESPACE, renderOptions } from './value-sets.ts';

/** Just enough of a Prometheus Operator CRD (ServiceMonitor, PrometheusRule) for the API server to serve its kind. */
const monitoringCrd = (kind: string, plural: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.monitoring.coreos.com` },
  spec: {
    group: 'monitoring.coreos.com',
    scope: 'Namespaced',
    names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
});

describe('charts/tollgate on a real API server (kubectl apply --dry-run=server)', () => {
  let plane: ControlPlane;
  const kubectl = (args: string[], input?: string) => plane.kubectl(args, input === undefined ? {} : { input });

  before(async () => {
    plane = await startControlPlane();
    await kubectl(['apply', '-f', join(CHART, 'crds')]);
    await kubectl(['apply', '-f', '-'], JSON.stringify(monitoringCrd('ServiceMonitor', 'servicemonitors')));
    await kubectl(['apply', '-f', '-'], JSON.stringify(monitoringCrd('PrometheusRule', 'prometheusrules')));
    await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/modelrouters.tollgate.dev',
      'crd/modelproviders.tollgate.dev',
      'crd/gatewayusers.tollgate.dev',
      'crd/servicemonitors.monitoring.coreos.com',
      'crd/prometheusrules.monitoring.coreos.com',
    ]);
    await kubectl(['create', 'namespace', NAMESPACE]);
    await kubectl(['create', 'namespace', WATCHED_NAMESPACE]);
  });
  after(async () => {
    await plane?.stop();
  });

  for (const set of VALUE_SETS) {
    it(`accepts every object of "${set.name}"`, async () => {
      const rendered = await renderChart(renderOptions(set));
      const objects = parseObjects(rendered);
      const output = await kubectl(['apply', '--dry-run=server', '-f', '-'], rendered);
      const accepted = output.split('\n').filter((line) => line.endsWith('(server dry run)'));
      assert.equal(accepted.length, objects.length, `kubectl said:\n${output}`);
    });
  }

  it('stores nothing: the dry runs left the release namespace empty', async () => {
    const left = await kubectl(['-n', NAMESPACE, 'get', 'deployments,statefulsets,services,configmaps,secrets,roles', '-o', 'name']);
    // The API server's own: the namespace's root CA ConfigMap and default token Secret (when its controllers run).
    assert.deepEqual(
      left.split('\n').filter((line) => line && !/^(configmap\/kube-root-ca\.crt|secret\/default-token-)/.test(line)),
      [],
    );
  });

  it("refuses a rendering Kubernetes cannot accept, with the API server's message (the check is real)", async () => {
    const rendered = await renderChart(renderOptions({ name: 'broken', values: {} }));
    const broken = rendered.replace('containerPort: 8080', 'containerPort: 80800');
    await assert.rejects(
      kubectl(['apply', '--dry-run=server', '-f', '-'], broken),
      /containerPort: Invalid value: 80800: must be between 1 and 65535/,
    );
  });
});
