// The layout's import rules (docs/architecture.md): the data plane (gateway/) and the control plane
// (operator/) never import each other, what both use lives in core/ and imports neither, bin/ is
// the only place that knows both, and no module reaches itself through its imports.
// Run by the test command: `npm run check:layout`.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
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
      to: { path: '^(gateway|operator|bin)/' },
    },
    {
      name: 'nothing-to-bin',
      comment: 'bin/ is the entry point: nothing imports it.',
      severity: 'error',
      from: { path: '^(core|gateway|operator)/' },
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
