// Writes the CustomResourceDefinitions to crds/, generated from the zod schemas of
// core/resources/kubernetes/crd-schemas.ts, and the same bytes to charts/tollgate/crds/ (helm
// installs a chart's crds/ folder before its templates). Run `npm run generate:crds` after
// changing a schema; test/unit/core/resources/kubernetes/crds.test.ts fails while crds/ is out of
// date, and test/e2e/chart/render.test.ts while the chart's copies differ.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { crdFiles } from '../core/resources/kubernetes/crds.ts';

const root = new URL('../', import.meta.url);
const CHART_CRDS = 'charts/tollgate/';

for (const { path, text } of crdFiles()) {
  for (const target of [path, CHART_CRDS + path]) {
    await writeFile(fileURLToPath(new URL(target, root)), text);
    process.stdout.write(`wrote ${target}\n`);
  }
}
