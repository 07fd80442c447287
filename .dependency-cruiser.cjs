// The layout's import rules (docs/architecture.md): the data plane (gateway/) and the control plane
// (operator/) never import each other, what both use lives in core/ and imports neither, the
// router worker (worker/) uses the gateway's routing but not its request path, bin/ is the only
// place that knows them all, the gateway's folders are layers (each imports only those below it),
// and no module reaches itself through its imports.
// Run by the test command: `npm run check:layout`.

/**
 * The gateway's folders, lowest first: a folder imports only folders before it here, so no two
 * import each other and the request's path reads bottom-up. Its files at the top (server.ts) are
 * above them all. A folder inside another listed here (`routing/assembly`) is a layer of its own,
 * not part of its parent's.
 */
const GATEWAY_LAYERS = [
  // the vocabulary: wire formats, token counting and prices, the endpoints, the API's errors and headers
  'wire',
  'metering',
  'endpoints',
  'api',
  // one translator per pair of APIs (client, backend)
  'translators',
  // the backends
  'providers',
  // routing, and what follows it
  'routing',
  'catalog',
  'observability',
  'alerts',
  'config',
  'accounts',
  // who a bearer token says the caller is (JWTs of configured issuers)
  'identity',
  // queue mode's parts, built on routing's
  'queue',
  // where routing is composed: the placers, provider health, health checks, the queue's parts
  'routing/assembly',
  // money
  'billing',
  'kubernetes',
  // the request, then its transport, then the process
  'pipeline',
  'http',
  'startup',
];

/** The layers inside `layer`'s folder: its rule is not theirs. */
const nestedIn = (layer) => GATEWAY_LAYERS.filter((other) => other.startsWith(`${layer}/`));

/** One rule a layer: nothing above it. */
const layerRules = GATEWAY_LAYERS.slice(0, -1).map((layer, i) => ({
  name: `gateway-layer-${layer.replaceAll('/', '-')}`,
  comment: `gateway/${layer}/ imports only the gateway's layers below it (GATEWAY_LAYERS in .dependency-cruiser.cjs).`,
  severity: 'error',
  from:
    nestedIn(layer).length > 0
      ? { path: `^gateway/${layer}/`, pathNot: `^gateway/(${nestedIn(layer).join('|')})/` }
      : { path: `^gateway/${layer}/` },
  to: { path: `^gateway/((${GATEWAY_LAYERS.slice(i + 1).join('|')})/|[^/]+[.]ts$)` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'pipeline-not-to-http',
      comment: 'The request pipeline owns the request whatever carries it: it reaches the client only through its AnswerChannel.',
      severity: 'error',
      from: { path: '^gateway/pipeline/' },
      to: { path: '^gateway/http/' },
    },
    {
      name: 'gateway-not-to-worker',
      comment: 'The router worker is a process of its own: the gateway runs workers in-process from gateway/queue/, never from worker/.',
      severity: 'error',
      from: { path: '^gateway/' },
      to: { path: '^worker/' },
    },
    {
      name: 'worker-not-to-request-path',
      comment:
        "The router worker places requests on providers; the gateway's request path, accounts, money and start-up are not its business.",
      severity: 'error',
      from: { path: '^worker/' },
      to: { path: '^gateway/((http|pipeline|startup|billing|accounts|translators|api)/|[^/]+[.]ts$)' },
    },
    {
      name: 'operator-not-to-worker',
      comment: 'The operator and the router worker share only core/.',
      severity: 'error',
      from: { path: '^operator/' },
      to: { path: '^worker/' },
    },
    {
      name: 'worker-not-to-operator',
      comment: 'The operator and the router worker share only core/.',
      severity: 'error',
      from: { path: '^worker/' },
      to: { path: '^operator/' },
    },
    {
      name: 'gateway-not-to-operator',
      comment: 'The data plane does not load control-plane code; what both need belongs in core/.',
      severity: 'error',
      from: { path: '^gateway/' },
      to: { path: '^operator/' },
    },
    {
      name: 'operator-not-to-gateway',
      comment: 'The control plane does not load data-plane code; what both need belongs in core/.',
      severity: 'error',
      from: { path: '^operator/' },
      to: { path: '^gateway/' },
    },
    {
      name: 'core-not-to-planes',
      comment: 'core/ is what both planes share, so it imports neither of them (nor the command line).',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(gateway|operator|worker|bin)/' },
    },
    {
      name: 'nothing-to-bin',
      comment: 'bin/ is the entry point: nothing imports it.',
      severity: 'error',
      from: { path: '^(core|gateway|operator|worker)/' },
      to: { path: '^bin/' },
    },
    {
      name: 'no-cycles',
      comment: 'An import cycle (type-only ones too) ties modules together that should stand alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // TypeScript 7 has no compiler API for dependency-cruiser to parse with; swc reads TypeScript.
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'] },
    exclude: { path: '^gateway/playground/web/' },
  },
};
