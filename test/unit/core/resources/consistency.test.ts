// Rules across resources: names and aliases unique across routers, provider ids unique, and every
// provider attached to a router that exists. Each conflict points at the field to fix.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findConflicts, formatPath } from '../../../../core/resources/consistency.ts';
import { RouterSpec } from '../../../../core/resources/router.ts';
import { ProviderSpec } from '../../../../core/resources/provider.ts';

const router = (name: string, aliases: string[] = []) => RouterSpec.parse({ name, type: 'text-generation', aliases });
const provider = (id: string, routerName: string) => ProviderSpec.parse({ id, router: routerName, type: 'simulator', model_name: 'm' });

describe('findConflicts', () => {
  test('distinct names, aliases and ids have no conflicts', () => {
    assert.deepEqual(findConflicts([router('a', ['x']), router('b', ['y'])], [provider('a-0', 'a'), provider('b-0', 'b')]), []);
  });

  const cases: {
    name: string;
    routers: RouterSpec[];
    providers: ProviderSpec[];
    conflicts: { path: (string | number)[]; message: string }[];
  }[] = [
    {
      name: 'two routers with the same name',
      routers: [router('a'), router('a')],
      providers: [],
      conflicts: [{ path: ['routers', 1, 'name'], message: '"a" is already used by router "a"' }],
    },
    {
      name: "an alias that is another router's name",
      routers: [router('a'), router('b', ['a'])],
      providers: [],
      conflicts: [{ path: ['routers', 1, 'aliases', 0], message: '"a" is already used by router "a"' }],
    },
    {
      name: "an alias that is another router's alias",
      routers: [router('a', ['x']), router('b', ['y', 'x'])],
      providers: [],
      conflicts: [{ path: ['routers', 1, 'aliases', 1], message: '"x" is already used by router "a"' }],
    },
    {
      name: 'an alias listed twice by one router',
      routers: [router('a', ['x', 'x'])],
      providers: [],
      conflicts: [{ path: ['routers', 0, 'aliases', 1], message: '"x" is listed twice for this router' }],
    },
    {
      name: 'two providers with the same id',
      routers: [router('a')],
      providers: [provider('p', 'a'), provider('p', 'a')],
      conflicts: [{ path: ['providers', 1, 'id'], message: 'provider id "p" is used twice' }],
    },
    {
      name: 'a provider of a router that does not exist',
      routers: [router('a')],
      providers: [provider('p', 'b')],
      conflicts: [{ path: ['providers', 0, 'router'], message: 'router "b" does not exist' }],
    },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(findConflicts(c.routers, c.providers), c.conflicts));
  }
});

describe('formatPath', () => {
  const cases: [PropertyKey[], string][] = [
    [[], ''],
    [['models'], 'models'],
    [['models', 2, 'providers', 0, 'args', 'api_url'], 'models[2].providers[0].args.api_url'],
    [['routers', 1, 'aliases', 0], 'routers[1].aliases[0]'],
  ];
  for (const [path, text] of cases) {
    test(`${JSON.stringify(path)} is written ${JSON.stringify(text)}`, () => assert.equal(formatPath(path), text));
  }
});
