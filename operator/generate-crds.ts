// Writes the CustomResourceDefinitions to crds/, generated from the zod schemas of
// gateway/resources/kubernetes/crd-schemas.ts. Run `npm run generate:crds` after changing a
// schema; test/unit/resources/kubernetes/crds.test.ts fails while the files are out of date.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { crdFiles } from '../gateway/resources/kubernetes/crds.ts';

const root = new URL('../', import.meta.url);

for (const { path, text } of crdFiles()) {
  await writeFile(fileURLToPath(new URL(path, root)), text);
  process.stdout.write(`wrote ${path}\n`);
}
