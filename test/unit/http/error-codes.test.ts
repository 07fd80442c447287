// docs/api.md's error table is the caller's list of every error the gateway answers with: it
// must hold each code of api-error.ts with its status and type, and nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CODES, type ErrorCode } from '../../../gateway/api/api-error.ts';

interface Row {
  statuses: number[];
  type: string;
  code: string;
}

/** The rows of the table under `## Errors` in docs/api.md. */
function documentedRows(): Row[] {
  const doc = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Errors\n'));
  const table = section.split('\n').filter((line) => /^\| \d/.test(line));
  return table.map((line) => {
    const [status = '', type = '', code = ''] = line
      .split('|')
      .slice(1, 4)
      .map((cell) => cell.trim().replaceAll('`', ''));
    return { statuses: status.split(',').map(Number), type, code };
  });
}

const rows = documentedRows();

test('docs/api.md lists every code of api-error.ts once, with its status and type', () => {
  for (const [code, entry] of Object.entries(CODES)) {
    const found = rows.filter((row) => row.code === code);
    const statuses = typeof entry.status === 'number' ? [entry.status] : [...entry.status];
    assert.deepEqual(found, [{ statuses, type: entry.type, code }], `${code}: its one row in docs/api.md`);
  }
});

test('docs/api.md lists no code api-error.ts does not have', () => {
  const unknown = rows.map((row) => row.code).filter((code) => !Object.hasOwn(CODES, code as ErrorCode));
  assert.deepEqual(unknown, []);
});
