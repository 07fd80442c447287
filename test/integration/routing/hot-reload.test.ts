// Hot reload: the configuration file is re-read (as on SIGHUP) and the routing table is swapped
// whole. Removed routers answer 404, new ones answer at once, /readyz shows the version of the
// snapshot being served, and a file that does not validate leaves the previous table serving.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../../gateway/config/config-file.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { chat, modelEntry, receivedModels } from '../../support/routing.ts';
import { testBed, type BedGateway } from '../../support/test-bed.ts';
import { configText, type GatewayConfig } from '../../support/gateway-config.ts';

const bed = testBed();

/** The version the gateway should report for a configuration file. */
const versionOf = (config: GatewayConfig) => parseConfig('config.yaml', configText(config), {}).snapshot.version;

const MODEL_NOT_FOUND = { error: { message: 'Model not found', type: 'invalid_request_error', param: 'model', code: 'model_not_found' } };

describe('hot reload', () => {
  let fake: FakeBackend;
  let gw: BedGateway;
  let first: GatewayConfig;
  let second: GatewayConfig;

  before(async () => {
    fake = await startFakeOpenAI();
    first = {
      models: [
        modelEntry('retired', 'shuffle', [{ model: 'retired-backend', url: fake.url }]),
        modelEntry('kept', 'shuffle', [{ model: 'kept-backend', url: fake.url }]),
      ],
    };
    second = {
      models: [
        modelEntry('kept', 'shuffle', [{ model: 'kept-backend-v2', url: fake.url }]),
        modelEntry('added', 'shuffle', [{ model: 'added-backend', url: fake.url }]),
      ],
    };
    gw = await bed.gateway(first);
  });

  after(async () => {
    await gw.close();
    await fake.close();
  });

  test('before the reload, the first file is served', async () => {
    assert.deepEqual((await gw.get('/readyz')).body, { status: 'ready', snapshot: versionOf(first), routers: 2 });
    assert.equal((await chat(gw, 'retired')).status, 200);
    assert.deepEqual((await chat(gw, 'added')).body, MODEL_NOT_FOUND);
  });

  test('after the reload, the new table serves', async () => {
    await gw.reconfigure(second);
    fake.requests.length = 0;

    const retired = await chat(gw, 'retired');
    assert.equal(retired.status, 404);
    assert.deepEqual(retired.body, MODEL_NOT_FOUND);

    const added = await chat(gw, 'added');
    assert.equal(added.status, 200);
    assert.equal(added.body.model, 'added');

    assert.equal((await chat(gw, 'kept')).status, 200);
    assert.deepEqual(receivedModels(fake), ['added-backend', 'kept-backend-v2'], 'a kept router uses its new providers');

    assert.notEqual(versionOf(second), versionOf(first));
    assert.deepEqual((await gw.get('/readyz')).body, { status: 'ready', snapshot: versionOf(second), routers: 2 });
    assert.deepEqual(
      (await gw.get('/v1/models')).body.data.map((m: { id: string }) => m.id),
      ['kept', 'added'],
    );
  });

  const invalid: { name: string; yaml: string }[] = [
    { name: 'a file that is not YAML', yaml: 'models: [\n' },
    {
      name: 'a file with an unknown router type',
      yaml: 'models:\n  - id: broken\n    type: chat\n    providers: [{ model: m, type: simulator }]\n',
    },
    {
      name: 'a file with an unset variable',
      yaml: 'models:\n  - id: broken\n    type: text-generation\n    providers: [{ model: m, type: openai, args: { api_key: "${NO_SUCH_KEY}" } }]\n',
    },
    { name: 'a file whose YAML alias refers to itself', yaml: 'models: &m [*m]\n' },
    { name: 'an alias bomb (10^9 values in 363 bytes)', yaml: aliasBomb() },
  ];
  for (const { name, yaml } of invalid) {
    test(`${name} keeps the current table serving`, async () => {
      await gw.reconfigure(yaml);

      assert.deepEqual((await gw.get('/readyz')).body, { status: 'ready', snapshot: versionOf(second), routers: 2 });
      assert.equal((await chat(gw, 'added')).status, 200);
      assert.equal((await chat(gw, 'broken')).status, 404);
    });
  }

  test('a valid file after an invalid one is loaded', async () => {
    await gw.reconfigure('models: [\n');
    await gw.reconfigure(first);
    assert.deepEqual((await gw.get('/readyz')).body, { status: 'ready', snapshot: versionOf(first), routers: 2 });
    assert.equal((await chat(gw, 'retired')).status, 200);
    assert.equal((await chat(gw, 'added')).status, 404);
  });
});

/** Nine levels of ten aliases each to the level below: 10^9 values once expanded. */
function aliasBomb(): string {
  const name = (level: number) => String.fromCharCode(97 + level);
  const levels = [`${name(0)}: &${name(0)} [${Array(10).fill('"x"').join(',')}]`];
  for (let level = 1; level < 9; level++)
    levels.push(
      `${name(level)}: &${name(level)} [${Array(10)
        .fill(`*${name(level - 1)}`)
        .join(',')}]`,
    );
  return `${levels.join('\n')}\nmodels: *${name(8)}\n`;
}
