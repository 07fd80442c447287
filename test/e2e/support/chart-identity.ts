// The identity file as charts/tollgate writes it (the ConfigMap <release>-identity) from
// `gateway.identity` values, written to a temporary file for a gateway process's --identity-file:
// the tests run the gateway with exactly what a cluster install would mount.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseObjects, renderChart } from '../../support/helm.ts';

export async function chartIdentityFile(identity: object): Promise<string> {
  const objects = parseObjects(await renderChart({ values: { gateway: { identity } } }));
  const configMap = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === 'tollgate-identity');
  const content = (configMap?.data as Record<string, string> | undefined)?.['identity.yaml'];
  if (content === undefined) throw new Error('charts/tollgate wrote no identity file for these values');
  const file = join(await mkdtemp(join(tmpdir(), 'tollgate-identity-')), 'identity.yaml');
  await writeFile(file, content);
  return file;
}
