// The configuration file (spec 2.3): what a valid file becomes, how ${VAR} references are filled
// in, and every error an operator can make, each with the exact line the gateway prints:
//   FILE: PATH: message
// where PATH uses the file's own field names (models[2].providers[0].args.api_url).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfigFile, parseConfig } from '../../../gateway/config/config-file.ts';
import { Snapshot } from '../../../core/resources/snapshot.ts';

const FILE = 'tollgate.yaml';

/** The problem lines of the error the file gives, each as printed: `FILE: PATH: message`. */
function problemLines(yaml: string, env: Record<string, string> = {}): string[] {
  let error: unknown;
  try {
    parseConfig(FILE, yaml, env);
  } catch (caught) {
    error = caught;
  }
  assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error === undefined ? 'a valid configuration' : String(error)}`);
  const [header, ...lines] = error.message.split('\n');
  assert.equal(header, `Invalid configuration in ${FILE}:`);
  assert.equal(lines.length, error.problems.length, `one line per problem, got:\n${error.message}`);
  for (const line of lines) assert.ok(line.startsWith(`  ${FILE}: `), `every problem line names the file: ${JSON.stringify(line)}`);
  return lines.map((line) => line.slice(2));
}

/** A model entry with one simulator provider, to build files from. */
const simulated = (id: string, extra = '') =>
  `  - id: ${id}\n    type: text-generation\n${extra}    providers:\n      - model: m\n        type: simulator\n`;

describe('a valid file', () => {
  const yaml = `
models:
  - id: Llama-3.1-8B
    type: text-generation
    aliases: [llama, chat]
    costs:
      prompt_tokens: 0.15
      completion_tokens: "0.60"
    providers:
      - model: meta-llama/Llama-3.1-8B-Instruct
        type: vllm
        args:
          api_url: http://vllm-a.inference:8000/
          api_key: sk-local
          timeout: 120
        carbon: { params_total_b: 8, zone: FRA }
      - model: llama3.1:8b
        type: ollama
  - id: embed
    type: text-embeddings-inference
    load_balancing_strategy: round_robin
    max_context_length: 512
    providers:
      - model: BAAI/bge-small-en-v1.5
        type: tei
        args: { api_url: "http://tei.inference" }
`;

  test('becomes the routing snapshot, with every default applied', () => {
    const { snapshot } = parseConfig(FILE, yaml, {});
    assert.deepEqual(snapshot.routers, [
      {
        name: 'Llama-3.1-8B',
        type: 'text-generation',
        load_balancing_strategy: 'shuffle',
        aliases: ['llama', 'chat'],
        fallbacks: [],
        costs: { prompt_tokens: '0.15', completion_tokens: '0.6', audio_minutes: '0' },
        max_context_length: 8192,
      },
      {
        name: 'embed',
        type: 'text-embeddings-inference',
        load_balancing_strategy: 'round_robin',
        aliases: [],
        fallbacks: [],
        costs: { prompt_tokens: '0', completion_tokens: '0', audio_minutes: '0' },
        max_context_length: 512,
      },
    ]);
    assert.deepEqual(snapshot.providers, [
      {
        type: 'vllm',
        id: 'llama-3-1-8b-0',
        router: 'Llama-3.1-8B',
        model_name: 'meta-llama/Llama-3.1-8B-Instruct',
        url: 'http://vllm-a.inference:8000',
        key: 'sk-local',
        timeout: 120,
        carbon: { params_total_b: 8, zone: 'FRA', pue: 1.2 },
      },
      {
        type: 'ollama',
        id: 'llama-3-1-8b-1',
        router: 'Llama-3.1-8B',
        model_name: 'llama3.1:8b',
        url: 'http://localhost:11434',
      },
      { type: 'tei', id: 'embed-0', router: 'embed', model_name: 'BAAI/bge-small-en-v1.5', url: 'http://tei.inference' },
    ]);
  });

  test('is a snapshot of the current format with a content digest as its version', () => {
    const { snapshot } = parseConfig(FILE, yaml, {});
    assert.equal(snapshot.format, 1);
    assert.match(snapshot.version, /^[0-9a-f]{16}$/);
    assert.deepEqual(Snapshot.parse(snapshot), snapshot);
  });

  test('the version depends on the content only', () => {
    const version = parseConfig(FILE, yaml, {}).snapshot.version;
    assert.equal(parseConfig('elsewhere.yaml', `# a comment changes nothing\n${yaml}`, {}).snapshot.version, version);
    assert.notEqual(parseConfig(FILE, yaml.replace('timeout: 120', 'timeout: 90'), {}).snapshot.version, version);
  });

  test('provider ids default to <router>-<index>, made id-safe', () => {
    const { snapshot } = parseConfig(FILE, `models:\n${simulated('GPT_4o.mini', '')}${simulated('b')}`, {});
    assert.deepEqual(
      snapshot.providers.map((p) => p.id),
      ['gpt-4o-mini-0', 'b-0'],
    );
  });

  test('a provider may set its own id', () => {
    const { snapshot } = parseConfig(
      FILE,
      'models:\n  - id: a\n    type: text-generation\n    providers:\n      - { id: gpu-node-7, model: m, type: simulator }\n',
      {},
    );
    assert.equal(snapshot.providers[0]?.id, 'gpu-node-7');
  });

  test('simulator args become the simulator settings', () => {
    const { snapshot } = parseConfig(
      FILE,
      'models:\n  - id: a\n    type: text-generation\n    providers:\n      - model: m\n        type: simulator\n        args: { latency_ms: 50, timeout: 5 }\n',
      {},
    );
    assert.deepEqual(snapshot.providers[0], {
      type: 'simulator',
      id: 'a-0',
      router: 'a',
      model_name: 'm',
      timeout: 5,
      simulator: { latency_ms: 50, tokens_per_second: 0, completion_tokens: 32 },
    });
  });
});

describe('${VAR} substitution', () => {
  const yaml = `
models:
  - id: chat
    type: text-generation
    providers:
      - model: m
        type: vllm
        args:
          api_url: http://\${VLLM_HOST}:8000
          api_key: \${VLLM_KEY}
          timeout: \${VLLM_TIMEOUT:-30}
`;
  const provider = (env: Record<string, string>) =>
    parseConfig(FILE, yaml, env).snapshot.providers[0] as { url: string; key: string; timeout: number };

  test('a variable fills in a whole value or a part of one', () => {
    const p = provider({ VLLM_HOST: 'gpu-1', VLLM_KEY: 'sk-123' });
    assert.equal(p.url, 'http://gpu-1:8000');
    assert.equal(p.key, 'sk-123');
  });

  test('${T:-30} gives the number 30 when T is not set', () => {
    assert.equal(provider({ VLLM_HOST: 'h', VLLM_KEY: 'k' }).timeout, 30);
  });

  test('${T:-30} gives the number in T when it is set', () => {
    assert.equal(provider({ VLLM_HOST: 'h', VLLM_KEY: 'k', VLLM_TIMEOUT: '2.5' }).timeout, 2.5);
  });

  test('a variable set to the empty string counts as not set', () => {
    assert.equal(provider({ VLLM_HOST: 'h', VLLM_KEY: 'k', VLLM_TIMEOUT: '' }).timeout, 30);
  });

  test('a value from the environment is never read as YAML syntax', () => {
    assert.equal(provider({ VLLM_HOST: 'h', VLLM_KEY: 'k: {x: [1' }).key, 'k: {x: [1');
  });

  test('an unset variable without a default is an error naming the path and the variable', () => {
    assert.deepEqual(problemLines(yaml, { VLLM_HOST: 'h' }), [
      `${FILE}: models[0].providers[0].args.api_key: environment variable VLLM_KEY is not set (write \${VLLM_KEY:-default} to give a default)`,
    ]);
  });

  test('each unset variable is reported once, with its own path', () => {
    assert.deepEqual(problemLines(yaml, {}), [
      `${FILE}: models[0].providers[0].args.api_url: environment variable VLLM_HOST is not set (write \${VLLM_HOST:-default} to give a default)`,
      `${FILE}: models[0].providers[0].args.api_key: environment variable VLLM_KEY is not set (write \${VLLM_KEY:-default} to give a default)`,
    ]);
  });
});

describe('configuration errors', () => {
  const cases: { name: string; yaml: string; lines: string[] }[] = [
    {
      name: 'an unknown router type lists the valid ones',
      yaml: 'models:\n  - id: a\n    type: chat\n    providers: [{ model: m, type: simulator }]\n',
      lines: [
        'models[0].type: Invalid option: expected one of "text-generation"|"image-text-to-text"|"text-embeddings-inference"|"text-classification"|"automatic-speech-recognition"',
      ],
    },
    {
      name: 'an unknown provider type lists the valid ones',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers: [{ model: m, type: llamacpp }]\n',
      lines: ['models[0].providers[0].type: unknown type; valid types are openai, vllm, mistral, ollama, tei, anthropic, simulator'],
    },
    {
      name: 'a model without its id',
      yaml: 'models:\n  - type: text-generation\n    providers: [{ model: m, type: simulator }]\n',
      lines: ['models[0].id: Invalid input: expected string, received undefined'],
    },
    {
      name: 'a model without its type',
      yaml: 'models:\n  - id: a\n    providers: [{ model: m, type: simulator }]\n',
      lines: [
        'models[0].type: Invalid option: expected one of "text-generation"|"image-text-to-text"|"text-embeddings-inference"|"text-classification"|"automatic-speech-recognition"',
      ],
    },
    {
      name: 'a provider without its model',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers: [{ type: simulator }]\n',
      lines: ['models[0].providers[0].model: Invalid input: expected string, received undefined'],
    },
    {
      name: 'a provider without its type',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers: [{ model: m }]\n',
      lines: ['models[0].providers[0].type: unknown type; valid types are openai, vllm, mistral, ollama, tei, anthropic, simulator'],
    },
    {
      name: 'a file without models',
      yaml: 'routers: []\n',
      lines: ['models: Invalid input: expected array, received undefined', '(top level): unknown field "routers"'],
    },
    {
      name: 'a file that is a list',
      yaml: '- id: a\n',
      lines: ['(top level): Invalid input: expected object, received array'],
    },
    {
      name: 'an api_url ending in /v1',
      yaml: `models:\n${simulated('a')}${simulated('b')}  - id: c\n    type: text-generation\n    providers:\n      - model: m\n        type: vllm\n        args: { api_url: "http://vllm:8000/v1" }\n`,
      lines: ['models[2].providers[0].args.api_url: must be the base address without /v1 (the gateway adds the API path)'],
    },
    {
      name: 'an api_url ending in /v1/',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers:\n      - model: m\n        type: openai\n        args: { api_url: "https://api.example.com/v1/" }\n',
      lines: ['models[0].providers[0].args.api_url: must be the base address without /v1 (the gateway adds the API path)'],
    },
    {
      name: 'an api_url that is not a URL',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers:\n      - model: m\n        type: vllm\n        args: { api_url: "not a url" }\n',
      lines: ['models[0].providers[0].args.api_url: must be an absolute http:// or https:// URL'],
    },
    {
      name: 'an api_url that is not http(s)',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers:\n      - model: m\n        type: vllm\n        args: { api_url: "ftp://vllm:8000" }\n',
      lines: ['models[0].providers[0].args.api_url: must be an absolute http:// or https:// URL'],
    },
    {
      name: 'a zero or negative timeout',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers:\n      - { model: m, type: simulator, args: { timeout: 0 } }\n      - { model: m, type: simulator, args: { timeout: -5 } }\n',
      lines: [
        'models[0].providers[0].args.timeout: must be more than 0 seconds',
        'models[0].providers[1].args.timeout: must be more than 0 seconds',
      ],
    },
    {
      name: 'a timeout over an hour',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers:\n      - { model: m, type: simulator, args: { timeout: 7200 } }\n',
      lines: ['models[0].providers[0].args.timeout: must be at most 3600 seconds'],
    },
    {
      name: 'a timeout that is not a number',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers:\n      - { model: m, type: simulator, args: { timeout: soon } }\n',
      lines: ['models[0].providers[0].args.timeout: Invalid input: expected number, received string'],
    },
    {
      name: 'an unknown field in a model',
      yaml: `models:\n${simulated('a', '    colour: red\n')}`,
      lines: ['models[0]: unknown field "colour"'],
    },
    {
      name: 'an unknown field in a provider',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers:\n      - { model: m, type: simulator, weight: 2 }\n',
      lines: ['models[0].providers[0]: unknown field "weight"'],
    },
    {
      name: "an unknown field in a provider's args",
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers:\n      - { model: m, type: vllm, args: { api_url: "http://vllm", retries: 2 } }\n',
      lines: ['models[0].providers[0]: unknown field "args.retries"'],
    },
    {
      name: 'an unknown top-level field',
      yaml: `modles: []\nmodels:\n${simulated('a')}`,
      lines: ['(top level): unknown field "modles"'],
    },
    {
      name: "an alias equal to another router's id",
      yaml: `models:\n${simulated('a')}${simulated('b', '    aliases: [a]\n')}`,
      lines: ['models[1].aliases[0]: "a" is already used by router "a"'],
    },
    {
      name: "an alias equal to another router's alias",
      yaml: `models:\n${simulated('a', '    aliases: [chat]\n')}${simulated('b', '    aliases: [embed, chat]\n')}`,
      lines: ['models[1].aliases[1]: "chat" is already used by router "a"'],
    },
    {
      name: "an id equal to an earlier router's alias",
      yaml: `models:\n${simulated('a', '    aliases: [chat]\n')}${simulated('chat')}`,
      lines: ['models[1].id: "chat" is already used by router "a"'],
    },
    {
      name: "an alias equal to its own router's id",
      yaml: `models:\n${simulated('a', '    aliases: [a]\n')}`,
      lines: ['models[0].aliases[0]: "a" is listed twice for this router'],
    },
    {
      name: 'two providers with the same id',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers:\n      - { id: p1, model: m, type: simulator }\n      - { id: p1, model: n, type: simulator }\n',
      lines: ['models[0].providers[1].id: provider id "p1" is used twice'],
    },
    {
      name: 'a model without providers',
      yaml: 'models:\n  - id: a\n    type: text-generation\n',
      lines: ['models[0].providers: a model needs at least one provider'],
    },
    {
      name: 'a model with an empty providers list',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers: []\n',
      lines: ['models[0].providers: a model needs at least one provider'],
    },
    {
      name: 'a vllm provider without api_url',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers: [{ model: m, type: vllm }]\n',
      lines: ['models[0].providers[0].args.api_url: Invalid input: expected string, received undefined'],
    },
    {
      name: 'a tei provider without api_url',
      yaml: 'models:\n  - id: e\n    type: text-embeddings-inference\n    providers: [{ model: m, type: tei, args: { timeout: 5 } }]\n',
      lines: ['models[0].providers[0].args.api_url: Invalid input: expected string, received undefined'],
    },
    {
      name: 'a carbon zone outside the table without its own factor',
      yaml: 'models:\n  - id: a\n    type: text-generation\n    providers: [{ model: m, type: simulator, carbon: { params_total_b: 8, zone: ITA } }]\n',
      lines: ['models[0].providers[0].carbon.zone: has no built-in emission factor (known: WOR, FRA, USA, SWE, DEU); set gwp_kg_per_kwh'],
    },
    {
      name: 'a negative price',
      yaml: `models:\n${simulated('a', '    costs: { prompt_tokens: -0.5, completion_tokens: 1 }\n')}`,
      lines: ['models[0].costs.prompt_tokens: price per million tokens must not be negative'],
    },
    {
      name: 'a price with more than 9 decimals',
      yaml: `models:\n${simulated('a', '    costs: { completion_tokens: "0.0000000001" }\n')}`,
      lines: ['models[0].costs.completion_tokens: price per million tokens must have at most 9 decimal places, got "0.0000000001"'],
    },
    {
      name: 'a price that is not a number',
      yaml: `models:\n${simulated('a', '    costs: { prompt_tokens: cheap }\n')}`,
      lines: ['models[0].costs.prompt_tokens: price per million tokens must be a decimal number, got "cheap"'],
    },
    {
      name: 'an unknown load-balancing strategy',
      yaml: `models:\n${simulated('a', '    load_balancing_strategy: fastest\n')}`,
      lines: [
        'models[0].load_balancing_strategy: Invalid option: expected one of "shuffle"|"round_robin"|"least_busy"|"lowest_latency"|"prefix_affinity"',
      ],
    },
  ];
  for (const { name, yaml, lines } of cases) {
    test(name, () => {
      assert.deepEqual(
        problemLines(yaml),
        lines.map((line) => `${FILE}: ${line}`),
      );
    });
  }

  test('duplicate router ids: the second one is reported at its id', () => {
    const lines = problemLines(`models:\n${simulated('a')}${simulated('a')}`);
    assert.equal(lines[0], `${FILE}: models[1].id: "a" is already used by router "a"`);
  });

  test('invalid YAML: one line naming the file, the reason and the position', () => {
    const lines = problemLines('models:\n  - id: a\n   type: text-generation\n');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, new RegExp(`^${FILE}: is not valid YAML: bad indentation of a sequence entry.*(3:4|line 3, column 4)`));
  });

  test('an alias inside the node it refers to: one line, not an endless walk', () => {
    for (const yaml of ['models: &m [*m]\n', 'models:\n  - &r\n    id: x\n    type: text-generation\n    providers: [*r]\n']) {
      assert.deepEqual(problemLines(yaml), [`${FILE}: has an alias (*name) inside the node it refers to, which would repeat forever`]);
    }
  });

  test('an alias bomb (aliases of aliases, 10^9 values in a few hundred bytes): one line, at once', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++)
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    const yaml = `${levels.join('\n')}\nmodels: *i\n`;
    assert.ok(yaml.length < 500, `a small file: ${yaml.length} bytes`);
    assert.deepEqual(problemLines(yaml), [`${FILE}: stands for more than 100000 values once its aliases (*name) are expanded`]);
  });

  test('aliases that expand to a reasonable size are fine', () => {
    const yaml = `models:\n  - id: a\n    type: text-generation\n    providers: &p [{model: m, type: simulator}]\n  - id: b\n    type: text-generation\n    providers: *p\n`;
    assert.deepEqual(
      parseConfig(FILE, yaml, {}).snapshot.routers.map((r) => r.name),
      ['a', 'b'],
    );
  });

  test('several problems in one file are all reported at once, one line each, in file order', () => {
    const yaml = `
models:
  - id: a
    type: chat
    providers:
      - model: m
        type: vllm
        args: { api_url: "http://vllm/v1", timeout: 0 }
  - id: b
    type: text-generation
  - id: c
    type: text-generation
    costs: { prompt_tokens: -1 }
    providers: [{ model: m, type: tei }]
`;
    assert.deepEqual(problemLines(yaml), [
      `${FILE}: models[0].type: Invalid option: expected one of "text-generation"|"image-text-to-text"|"text-embeddings-inference"|"text-classification"|"automatic-speech-recognition"`,
      `${FILE}: models[0].providers[0].args.timeout: must be more than 0 seconds`,
      `${FILE}: models[0].providers[0].args.api_url: must be the base address without /v1 (the gateway adds the API path)`,
      `${FILE}: models[1].providers: a model needs at least one provider`,
      `${FILE}: models[2].costs.prompt_tokens: price per million tokens must not be negative`,
      `${FILE}: models[2].providers[0].args.api_url: Invalid input: expected string, received undefined`,
    ]);
  });
});

describe('loadConfigFile', () => {
  test('reads and parses a file, with the environment it is given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-config-'));
    try {
      const file = join(dir, 'config.yaml');
      await writeFile(file, `models:\n${simulated('${ROUTER_NAME:-fallback}')}`);
      const { snapshot } = await loadConfigFile(file, { ROUTER_NAME: 'from-env' });
      assert.deepEqual(
        snapshot.routers.map((r) => r.name),
        ['from-env'],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a file that cannot be read is a ConfigError naming the file and the reason', async () => {
    const file = join(tmpdir(), 'tollgate-no-such-dir', 'config.yaml');
    await assert.rejects(loadConfigFile(file, {}), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.message, `Invalid configuration in ${file}:\n  ${file}: cannot be read: ENOENT`);
      return true;
    });
  });
});

describe("a Service's endpoints as replicas", () => {
  test('service_ref is refused in a file: only a gateway in Kubernetes mode follows a Service', () => {
    const yaml = `
models:
  - id: chat
    type: text-generation
    providers:
      - model: m
        type: vllm
        service_ref: { name: vllm, port: 8000 }
`;
    assert.deepEqual(problemLines(yaml), [
      `${FILE}: models[0].providers[0].service_ref: names a Kubernetes Service, whose endpoints only a gateway in Kubernetes mode follows (there is no Kubernetes API here); list the replicas' addresses in urls (args.api_urls in a file) instead`,
    ]);
  });
});
