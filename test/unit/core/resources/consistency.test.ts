// Rules across resources: names and aliases unique across routers, provider ids unique, every
// provider attached to a router that exists, and fallbacks that exist, fit and form no loop. Each conflict points at the field to fix.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findConflicts, formatPath } from '../../../../core/resources/consistency.ts';
import { RouterSpec } from '../../../../core/resources/router.ts';
import { ProviderSpec } from '../../../../core/resources/provider.ts';

const router = (name: string, aliases: string[] = [], fallbacks: string[] = [], type = 'text-generation') =>
  RouterSpec.parse({ name, type, aliases, fallbacks });
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
      name: 'a fallback that names no router',
      routers: [router('a', [], ['ghost'])],
      providers: [],
      conflicts: [{ path: ['routers', 0, 'fallbacks', 0], message: 'fallback "ghost" of router "a" does not exist' }],
    },
    {
      name: 'a router its own fallback, by an alias',
      routers: [router('a', ['x'], ['x'])],
      providers: [],
      conflicts: [{ path: ['routers', 0, 'fallbacks', 0], message: 'fallback "x" of router "a" is the router itself' }],
    },
    {
      name: 'a fallback listed twice, by name and alias',
      routers: [router('a', [], ['b', 'y']), router('b', ['y'])],
      providers: [],
      conflicts: [{ path: ['routers', 0, 'fallbacks', 1], message: 'fallback "y" of router "a" is listed twice' }],
    },
    {
      name: 'a fallback of a type that serves none of the endpoints',
      routers: [router('a', [], ['e']), router('e', [], [], 'text-embeddings-inference')],
      providers: [],
      conflicts: [
        {
          path: ['routers', 0, 'fallbacks', 0],
          message:
            'fallback "e" of router "a" is of type text-embeddings-inference, which serves no endpoint a text-generation router does',
        },
      ],
    },
    {
      name: 'an image-text-to-text fallback of a text-generation router (both serve chat)',
      routers: [router('a', [], ['v']), router('v', [], [], 'image-text-to-text')],
      providers: [],
      conflicts: [],
    },
    {
      name: 'fallbacks that close a loop through three routers: the edge that closes it is refused',
      routers: [router('a', [], ['b']), router('b', [], ['c']), router('c', [], ['a'])],
      providers: [],
      conflicts: [{ path: ['routers', 2, 'fallbacks', 0], message: 'fallback "a" of router "c" would close a loop: c → a → b → c' }],
    },
    {
      name: 'two routers sharing a fallback form no loop',
      routers: [router('a', [], ['c']), router('b', [], ['c']), router('c')],
      providers: [],
      conflicts: [],
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
