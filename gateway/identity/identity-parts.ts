// Identity by token, assembled at start-up from the identity file: each issuer's keys read from
// where its configuration says (jwks-sources.ts), the verifier, the directory of subjects and
// groups, the callers tokens stand for, and single sign-on when configured. A Kubernetes issuer's keys are read with the
// gateway's own Kubernetes client, made only when such an issuer is configured.
import type { Logger } from 'pino';
import type { KubeClient } from '../../core/kubernetes/kube-client.ts';
import type { AccountStore } from '../../core/store/accounts.ts';
import type { SignInStore } from '../../core/store/sign-ins.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { UserSpec } from '../../core/resources/user.ts';
import type { IdentityConfig } from './identity-config.ts';
import { IdentityAccounts } from './identity-accounts.ts';
import { IdentityDirectory } from './identity-directory.ts';
import { jwksAt, jwksByDiscovery, jwksOfKubernetes } from './jwks-sources.ts';
import { JwtVerifier, type JwtIssuer } from './jwt-verifier.ts';
import { SignIn } from './sign-in.ts';
import { TokenCallers } from './token-callers.ts';

/** The identity file's content, and the Kubernetes client its Kubernetes issuers read keys with. */
export interface IdentitySetup {
  readonly config: IdentityConfig;
  readonly kube?: KubeClient | undefined;
  /** Single sign-on's client secret (--oidc-client-secret); none for a public client. */
  readonly clientSecret?: string | undefined;
}

export interface Identity {
  readonly tokens: TokenCallers;
  /** Single sign-on, when the identity file configures it. */
  readonly signIn: SignIn | undefined;
  close(): void;
}

export function identityParts(
  setup: IdentitySetup,
  store: { readonly accounts: AccountStore; readonly signIns: SignInStore },
  /** Kubernetes mode: writes a user's GatewayUser (AccountDirectory.publishUser). */
  publish: ((user: UserSpec) => Promise<void>) | undefined,
  log: Pick<Logger, 'info' | 'warn'>,
  now: () => number,
  metrics?: Pick<GatewayMetrics, 'tokenRefusals' | 'signIns' | 'usersMade'>,
): Identity {
  const { config } = setup;
  const issuers = config.issuers.map((issuer): JwtIssuer => {
    let keys: JwtIssuer['keys'];
    if (issuer.kubernetes) {
      if (!setup.kube) throw new Error(`issuer ${issuer.name}: kubernetes: true needs a Kubernetes client`);
      keys = { source: 'the Kubernetes API (/openid/v1/jwks)', load: jwksOfKubernetes(setup.kube) };
    } else if (issuer.jwks_url !== undefined) keys = { source: issuer.jwks_url, load: jwksAt(issuer.jwks_url) };
    else keys = { source: `the discovery document of ${issuer.issuer}`, load: jwksByDiscovery(issuer.issuer) };
    return {
      issuer: issuer.issuer,
      keys,
      audiences: issuer.audiences,
      algorithms: issuer.algorithms,
      clockToleranceSeconds: issuer.clock_tolerance_seconds,
    };
  });
  const verifier = new JwtVerifier(issuers, {
    jwksTimeoutMs: config.jwks_timeout_ms,
    jwksMinRefreshMs: config.jwks_min_refresh_seconds * 1000,
    jwksMaxAgeMs: config.jwks_max_age_seconds * 1000,
    now,
    log,
  });
  const directory = new IdentityDirectory(store.accounts);
  const accounts = new IdentityAccounts({
    config,
    directory,
    store: store.accounts,
    publish,
    now,
    log,
    onUserMade: metrics && ((issuer) => metrics.usersMade.inc({ issuer })),
  });
  const tokens = new TokenCallers({
    verifier,
    config,
    accounts,
    store: store.accounts,
    now,
    onRefusal: metrics && ((reason) => metrics.tokenRefusals.inc({ reason })),
  });
  const signInConfig = config.sign_in;
  const signIn =
    signInConfig &&
    new SignIn({
      config: signInConfig,
      issuer: config.issuers.find((issuer) => issuer.name === signInConfig.issuer)!,
      clientSecret: setup.clientSecret,
      store: store.signIns,
      accounts,
      now,
      log,
      onOutcome: metrics && ((outcome) => metrics.signIns.inc({ outcome })),
    });
  return {
    tokens,
    signIn,
    close() {
      tokens.close();
      directory.close();
    },
  };
}
