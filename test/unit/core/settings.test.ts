// One declaration per setting gives its flag, its --help line with the default, the reading of
// flags over variables, and error lines naming both the flag and the variable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { describeIssues, flagOf, helpOf, optionsOf, readRaw, schemaOf, settingsTable, type Settings } from '../../../core/settings.ts';

const SETTINGS = {
  bodyLimit: { schema: z.coerce.number().int().min(1024).default(4096), value: '<bytes>', env: 'T_BODY_LIMIT', help: 'largest body' },
  port: { schema: z.coerce.number().int(), short: '-p', value: '<port>', env: 'T_PORT', help: 'port to listen on' },
  podName: { schema: z.string().optional(), value: '<name>', env: 'T_POD', help: 'who I am', defaultText: 'the host name' },
  verbose: { schema: z.boolean().optional(), env: 'T_VERBOSE', help: 'say more', doc: 'Says *more*.', group: 'extra' },
} as const satisfies Settings;

test('the flag is the key in kebab case, with its short alias and value placeholder', () => {
  assert.equal(flagOf('bodyLimit', SETTINGS.bodyLimit), '--body-limit <bytes>');
  assert.equal(flagOf('port', SETTINGS.port), '-p, --port <port>');
  assert.equal(flagOf('verbose', SETTINGS.verbose), '--verbose');
});

test('--help states the default the schema holds, a default it cannot hold, or that the setting is required', () => {
  assert.equal(helpOf(SETTINGS.bodyLimit), 'largest body (default 4096) [env T_BODY_LIMIT]');
  assert.equal(helpOf(SETTINGS.podName), 'who I am (default the host name) [env T_POD]');
  assert.equal(helpOf(SETTINGS.port), 'port to listen on (required) [env T_PORT]');
  assert.equal(helpOf(SETTINGS.verbose), 'say more [env T_VERBOSE]');
  assert.deepEqual(
    optionsOf(SETTINGS).map((o) => o.key),
    ['bodyLimit', 'port', 'podName', 'verbose'],
  );
});

test('a flag wins over its variable, and an empty variable is unset', () => {
  assert.deepEqual(readRaw(SETTINGS, { port: '1' }, { T_PORT: '2', T_BODY_LIMIT: '', T_POD: 'pod-a' }), { port: '1', podName: 'pod-a' });
});

test('an error names the flag and the variable; a required setting left out "is required"', () => {
  const raw = readRaw(SETTINGS, {}, { T_BODY_LIMIT: '12' });
  const parsed = schemaOf(SETTINGS).safeParse(raw);
  assert.equal(parsed.success, false);
  assert.equal(
    describeIssues(SETTINGS, parsed.error!.issues, raw),
    'Invalid settings:\n  --body-limit (T_BODY_LIMIT): Too small: expected number to be >=1024\n  --port (T_PORT): is required',
  );
});

test('the docs table lists each setting of a group with its default and meaning', () => {
  assert.equal(
    settingsTable(SETTINGS),
    [
      '| Flag | Variable | Default | Meaning |',
      '| --- | --- | --- | --- |',
      '| `--body-limit <bytes>` | `T_BODY_LIMIT` | `4096` | Largest body. |',
      '| `-p, --port <port>` | `T_PORT` | (required) | Port to listen on. |',
      '| `--pod-name <name>` | `T_POD` | the host name | Who I am. |',
    ].join('\n'),
  );
  assert.equal(settingsTable(SETTINGS, 'extra').split('\n')[2], '| `--verbose` | `T_VERBOSE` | (none) | Says *more*. |');
});
