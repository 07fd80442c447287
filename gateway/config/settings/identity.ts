// Settings of identity by token (issue 32): the file naming the issuers whose bearer JWTs the
// gateway believes and how their claims map to users, teams and roles (gateway/identity/). One
// group of the gateway's settings registry (gateway/config/settings.ts); docs/identity.md.
import { z } from 'zod';
import type { Settings } from '../../../core/settings.ts';

export const IDENTITY_SETTINGS = {
  identityFile: {
    schema: z.string().min(1).optional(),
    value: '<file>',
    env: 'TOLLGATE_IDENTITY_FILE',
    help: 'identity file (YAML): issuers whose bearer JWTs are believed, and how their claims map to users, teams and roles',
    doc: 'The [identity file](identity.md): the issuers whose bearer JWTs callers may send instead of an API key (an identity provider, the Kubernetes API server for service-account tokens), the claims naming the user and their groups, and how groups map to teams and roles. Read at start-up. Without it, only API keys authenticate.',
  },
  oidcClientSecret: {
    schema: z.string().min(1).optional(),
    value: '<secret>',
    env: 'TOLLGATE_OIDC_CLIENT_SECRET',
    help: 'single sign-on: the client secret the identity provider gave the gateway (none: a public client, with PKCE)',
    doc: "Single sign-on's client secret ([identity.md](identity.md#single-sign-on)), from a Secret; without it the gateway signs people in as a public client (PKCE only). Never logged or shown.",
  },
} as const satisfies Settings;
