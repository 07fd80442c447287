// The settings tables in the docs are generated from the settings' declarations; a change to a
// setting (a default, a bound, a new flag) that is not carried into the docs fails here.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { generatedPages, withTable } from '../../../bin/settings-docs.ts';

const ROOT = new URL('../../../', import.meta.url);

test('the committed settings tables are what the declarations generate (npm run generate:docs)', async () => {
  for (const [page, expected] of await generatedPages(ROOT)) {
    assert.equal(await readFile(new URL(page, ROOT), 'utf8'), expected, `${page} is stale: run npm run generate:docs`);
  }
});

test('a table is replaced between its markers, and a page without them is an error', () => {
  const page = 'intro\n<!-- settings:x -->\nold table\n<!-- /settings:x -->\nafter\n';
  assert.equal(withTable(page, 'x', 'new table'), 'intro\n<!-- settings:x -->\nnew table\n<!-- /settings:x -->\nafter\n');
  assert.throws(() => withTable('no markers', 'x', 'table'), /no <!-- settings:x -->/);
});
